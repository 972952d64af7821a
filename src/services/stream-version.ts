import type { ServiceContext } from './context.js';

/**
 * Current version of an event stream (0 when it has no events), for commands whose state is a set
 * of read-table rows without a version of their own (a user's drafts, a realm's linkifiers). It
 * also waits until the read tables include the stream's last event, so state read afterwards is
 * at least as new as the version: a later append by anyone then shows up as a version conflict.
 */
export async function streamVersion(ctx: ServiceContext, streamId: string): Promise<number> {
  const row = await ctx.db
    .selectFrom('events')
    .select((eb) => [eb.fn.max('stream_version').as('version'), eb.fn.max('position').as('position')])
    .where('stream_id', '=', streamId)
    .executeTakeFirst();
  if (!row || row.version === null || row.version === undefined) return 0;
  const position = Number(row.position);
  if (position > ctx.projectedPosition()) await ctx.waitForProjections(position);
  return Number(row.version);
}
