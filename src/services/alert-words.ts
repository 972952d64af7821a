import { decideAlertWords, evolveAlertWords, type AlertWordsCommand, type AlertWordsState } from '../domain/alert-words/decider.js';
import type { AlertWordsEvent } from '../domain/alert-words/events.js';
import type { Db } from '../db/database.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';

export const alertWordsStream = (userId: number) => `alert-words-${userId}`;

/** The user's alert words in the order they were added, as events list them. */
export async function listAlertWords(db: Db, userId: number): Promise<string[]> {
  const rows = await db.selectFrom('alert_words').select('word').where('user_id', '=', userId).orderBy('ordinal').execute();
  return rows.map((r) => r.word);
}

/** Runs an alert-word command on the user's own stream; the state is that stream folded. Returns the new list. */
async function runAlertWords(ctx: ServiceContext, meta: RequestMeta, command: AlertWordsCommand): Promise<string[]> {
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = alertWordsStream(command.user_id);
    const history = await ctx.store.readStream(streamId);
    const state = history.reduce<AlertWordsState>((s, e) => evolveAlertWords(s, e as unknown as AlertWordsEvent), { alert_words: [] });
    const version = history.length > 0 ? history[history.length - 1]!.stream_version : -1;
    const events = decideAlertWords(command, state);
    const after = events[events.length - 1]!.data.alert_words;
    return { appends: [{ streamId, expectedVersion: version, events }], result: [...after] };
  });
  return result;
}

export function addAlertWords(ctx: ServiceContext, meta: RequestMeta, userId: number, words: string[]): Promise<string[]> {
  return runAlertWords(ctx, meta, { type: 'AddAlertWords', user_id: userId, words });
}

export function removeAlertWords(ctx: ServiceContext, meta: RequestMeta, userId: number, words: string[]): Promise<string[]> {
  return runAlertWords(ctx, meta, { type: 'RemoveAlertWords', user_id: userId, words });
}
