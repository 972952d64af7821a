import { decideLinkifiers, type LinkifierCommand } from '../domain/linkifiers/decider.js';
import { listLinkifierRows } from '../read/linkifiers.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const linkifiersStream = (realmId: number) => `linkifiers-${realmId}`;

/** Runs one linkifier command against the realm's whole (ordered) list. */
export async function changeLinkifiers(ctx: ServiceContext, meta: RequestMeta, command: LinkifierCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = linkifiersStream(meta.realmId);
    const version = await streamVersion(ctx, streamId);
    const linkifiers = await listLinkifierRows(ctx.db, meta.realmId);
    const events = decideLinkifiers(command, { realm_id: meta.realmId, linkifiers });
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}

export async function addLinkifier(ctx: ServiceContext, meta: RequestMeta, command: Omit<Extract<LinkifierCommand, { type: 'AddLinkifier' }>, 'type' | 'linkifier_id'>): Promise<number> {
  const linkifier_id = await ctx.commands.nextId('linkifier_id_seq');
  await changeLinkifiers(ctx, meta, { type: 'AddLinkifier', linkifier_id, ...command });
  return linkifier_id;
}
