import { randomUUID } from 'node:crypto';
import { ApiError } from '../../domain/errors.js';
import { outgoingWebhookStream, type OutgoingWebhookCompleted } from '../../domain/outgoing-webhooks/events.js';
import type { StreamAppend } from '../../eventstore/types.js';
import { getBotService } from '../../read/bot-services.js';
import { getMessageRow, type MessageRow } from '../../read/messages.js';
import { outgoingWebhookJobPending, type OutgoingWebhookJob } from '../../read/outgoing-webhook-jobs.js';
import { getRealm, realmHost, type RealmRow } from '../../read/realm.js';
import { apiEmail, getUserById, type UserRow } from '../../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from '../context.js';
import { messageStream, prepareMessage, type PreparedMessage, type SendParams } from '../message-send.js';
import { realmRenderData } from '../render-context.js';
import { postWebhook, type CallOutcome } from './http-call.js';
import { webhookMessageDict } from './message-dict.js';
import { conversationFailure, failures, messageLinkUrl, ownerNoticeContent, type LinkedMessage } from './notices.js';
import { isRetried, MAX_ATTEMPTS, planFor, replyRefused, type Failure, type Plan } from './outcome.js';
import { requestBody } from './payload.js';

export type Outcome = OutgoingWebhookCompleted['data']['outcome'];

export interface DeliveryOptions {
  /** how long one request may take (the real server's OUTGOING_WEBHOOK_TIMEOUT_SECONDS: 10) */
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  /** false once the server is stopping: no more retries, the trigger stays pending for the next start */
  keepGoing?: () => boolean;
}

/** The client the bot's answers are sent with, as on the real server. */
const RESPONSE_CLIENT = 'OutgoingWebhookResponse';

interface Context {
  job: OutgoingWebhookJob;
  bot: UserRow;
  realm: RealmRow;
  row: MessageRow;
  linked: LinkedMessage;
}

/**
 * Calls the webhook of the bot a message triggered, and sends what follows from the answer (the
 * real server's OutgoingWebhookWorker): the request is made outside any transaction, then the
 * bot's messages and the OutgoingWebhookCompleted go in one append that expects the trigger's
 * stream not to exist. Another process (or this one after a crash) that delivered the same
 * trigger wins the append; this one then sends nothing. A crash before the append leaves the
 * trigger pending, and the webhook is called again on the next pass.
 */
export async function deliverOutgoingWebhook(ctx: ServiceContext, job: OutgoingWebhookJob, options: DeliveryOptions): Promise<Outcome | 'postponed'> {
  const [bot, service, row, realm] = await Promise.all([
    getUserById(ctx.db, job.bot_id), getBotService(ctx.db, job.bot_id), getMessageRow(ctx.db, job.message_id), getRealm(ctx.db, job.realm_id),
  ]);
  // The message was deleted, the bot deactivated or no longer an outgoing webhook bot: nothing to do.
  if (!bot || !bot.is_active || !service || !row || !realm) return completeWithoutMessages(ctx, job, 'skipped', 0);
  const stream = row.stream_id === null ? null : await ctx.db.selectFrom('streams').select(['id', 'name']).where('id', '=', row.stream_id).executeTakeFirst();
  const linked: LinkedMessage = {
    id: row.id,
    stream: stream ?? null,
    topic: row.topic,
    dmUserIds: row.dm_key ? row.dm_key.split(',').map(Number) : [],
  };
  const message = await webhookMessageDict(ctx.db, bot, realm, row, stream?.name ?? '', (await realmRenderData(ctx, realm.id)).context.linkifiers);
  const body = requestBody(service.interface, {
    message,
    trigger: job.trigger === 'direct_message' ? 'direct_message' : 'mention',
    bot: { id: bot.id, email: apiEmail(bot, realmHost(realm)), full_name: bot.full_name },
    token: service.token,
    realm: { id: realm.id, host: realmHost(realm) },
  });
  let plan: Plan;
  let attempts = 0;
  if (body === null) {
    plan = { kind: 'failure', failure: { conversation: conversationFailure(failures.slackDirect), owner: null } };
  } else {
    let outcome: CallOutcome;
    do {
      attempts += 1;
      outcome = await postWebhook(service.base_url, body, { timeoutMs: options.timeoutMs, allowPrivateNetworks: options.allowPrivateNetworks });
    } while (isRetried(outcome) && attempts < MAX_ATTEMPTS && (options.keepGoing?.() ?? true));
    if (isRetried(outcome) && attempts < MAX_ATTEMPTS) return 'postponed';
    plan = planFor(service.interface, outcome, row.content, options.timeoutMs / 1000);
  }
  return commit(ctx, { job, bot, realm, row, linked }, plan, attempts);
}

/** Ends a trigger with no message (a bot or message gone, or a delivery that cannot be sent). */
export async function completeWithoutMessages(ctx: ServiceContext, job: OutgoingWebhookJob, outcome: Outcome, attempts: number): Promise<Outcome> {
  const meta = metaOf(job.realm_id, job.bot_id);
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    if (!(await outgoingWebhookJobPending(ctx.db, job.message_id, job.bot_id))) return { appends: [], result: 'skipped' as Outcome };
    return { appends: [completion(job, outcome, attempts)], result: outcome };
  });
  return result;
}

function metaOf(realmId: number, botId: number): RequestMeta {
  return { actorId: botId, realmId, client: RESPONSE_CLIENT, requestId: randomUUID(), now: new Date() };
}

function completion(job: OutgoingWebhookJob, outcome: Outcome, attempts: number): StreamAppend {
  return {
    streamId: outgoingWebhookStream(job.message_id, job.bot_id),
    expectedVersion: -1,
    events: [{ type: 'OutgoingWebhookCompleted', data: { message_id: job.message_id, bot_id: job.bot_id, realm_id: job.realm_id, outcome, attempts } }],
  };
}

/** Where the bot answers: the channel and topic of the message, or its direct message conversation. */
function conversationOf(c: Context): Pick<SendParams, 'type' | 'to' | 'topic'> {
  return c.row.stream_id !== null
    ? { type: 'stream', to: c.row.stream_id, topic: c.row.topic }
    : { type: 'private', to: c.linked.dmUserIds };
}

async function commit(ctx: ServiceContext, c: Context, plan: Plan, attempts: number): Promise<Outcome> {
  const meta = metaOf(c.realm.id, c.bot.id);
  let prepared: PreparedMessage[] = [];
  // The bot's own messages are sent as any message of its: a refusal of a notice drops that notice.
  const send = async (params: SendParams): Promise<PreparedMessage | null> => {
    try {
      return await prepareMessage(ctx, meta, c.bot, c.realm, { ...params, skip_channel_access_check: params.type === 'stream' });
    } catch (error) {
      if (error instanceof ApiError) return null;
      throw error;
    }
  };
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    prepared = [];
    if (!(await outgoingWebhookJobPending(ctx.db, c.job.message_id, c.job.bot_id))) return { appends: [], result: 'skipped' as Outcome };
    let outcome: Outcome = plan.kind === 'nothing' ? 'no_reply' : 'failed';
    let failure: Failure | null = plan.kind === 'failure' ? plan.failure : null;
    if (plan.kind === 'reply') {
      try {
        const { content, widget_content } = plan.reply;
        prepared.push(await prepareMessage(ctx, meta, c.bot, c.realm, {
          ...conversationOf(c), content, ...(widget_content !== undefined ? { widget_content } : {}), skip_channel_access_check: c.row.stream_id !== null,
        }));
        outcome = 'replied';
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        failure = replyRefused(error.message, plan.responseText);
      }
    }
    if (failure) {
      if (failure.conversation !== null) {
        const notice = await send({ ...conversationOf(c), content: failure.conversation });
        if (notice) prepared.push(notice);
      }
      const owner = c.bot.bot_owner_id === null ? undefined : await getUserById(ctx.db, c.bot.bot_owner_id);
      if (failure.owner && owner) {
        const content = ownerNoticeContent({ ...failure.owner, messageUrl: messageLinkUrl(c.realm.url, c.linked), botName: c.bot.full_name });
        const notice = await send({ type: 'private', to: [owner.id], content });
        if (notice) prepared.push(notice);
      }
    }
    const appends: StreamAppend[] = [
      ...prepared.flatMap((p) => [{ streamId: messageStream(p.id), expectedVersion: -1 as const, events: p.events }, ...p.sideAppends]),
      completion(c.job, outcome, attempts),
    ];
    return { appends, result: outcome };
  });
  for (const p of prepared) p.committed();
  return result;
}
