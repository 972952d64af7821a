import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { errors } from '../domain/errors.js';
import type { QueueRegistered } from '../domain/queues/events.js';
import { normalizeNarrow } from '../domain/queues/narrow.js';
import type { UserRow } from '../read/users.js';
import type { RealmRow } from '../read/realm.js';
import { metadataOf, type RequestMeta, type ServiceContext } from '../services/context.js';
import { fetchSections } from './sections.js';
import { HEARTBEAT_BASE, clientEventId, positionOf, slotOf, snapshotId } from './ids.js';
import type { EventQueueHub } from './hub.js';
import { QueueCache } from './queue-cache.js';
import { CursorWriter } from './cursor-writer.js';
import type { ClientEvent, QueueOptions, Recipient } from './types.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../version.js';

export const MAX_QUEUE_LIFESPAN_SECS = 7 * 24 * 3600;

/** Calls `leave` when the polling client goes away; returns how to stop listening. */
export type ClientGone = (leave: () => void) => () => void;
const queueStream = (queueId: string) => `queue-${queueId}`;

export interface RegisterParams {
  event_types?: string[];
  fetch_event_types?: string[];
  narrow?: unknown[];
  all_public_streams?: boolean;
  include_subscribers?: boolean | string;
  client_capabilities?: Record<string, boolean>;
  apply_markdown?: boolean;
  client_gravatar?: boolean;
  slim_presence?: boolean;
  queue_lifespan_secs?: number;
}

type QueueRow = NonNullable<Awaited<ReturnType<QueueService['readQueue']>>>;

export class QueueService {
  private sweeper: NodeJS.Timeout | undefined;
  private readonly cursors: CursorWriter;
  private readonly queueCache: QueueCache<QueueRow>;

  constructor(
    private readonly ctx: ServiceContext,
    readonly hub: EventQueueHub,
  ) {
    this.cursors = new CursorWriter(ctx.db);
    this.queueCache = new QueueCache(ctx.db, () => ctx.tablesVersion(['event_queues']));
  }

  async register(meta: RequestMeta, user: UserRow, realm: RealmRow, params: RegisterParams): Promise<Record<string, unknown>> {
    const options: QueueOptions = {
      apply_markdown: params.apply_markdown ?? false,
      client_gravatar: params.client_gravatar ?? false,
      slim_presence: params.slim_presence ?? false,
      all_public_streams: params.all_public_streams ?? false,
      include_subscribers: params.include_subscribers === true || params.include_subscribers === 'partial',
      client_capabilities: params.client_capabilities ?? {},
      narrow: normalizeNarrow(params.narrow),
      event_types: params.event_types ?? null,
    };
    const lifespan = Math.min(
      Math.max(params.queue_lifespan_secs || this.ctx.config.defaultQueueLifespanSecs, this.ctx.config.defaultQueueLifespanSecs),
      MAX_QUEUE_LIFESPAN_SECS,
    );
    const queueId = `${Math.floor(meta.now.getTime() / 1000)}:${randomUUID()}`;
    const event: QueueRegistered = {
      type: 'QueueRegistered',
      data: {
        queue_id: queueId,
        user_id: user.id,
        realm_id: realm.id,
        event_types: options.event_types,
        narrow: options.narrow,
        options: { ...options },
        lifespan_secs: lifespan,
        created_at: Math.floor(meta.now.getTime() / 1000),
      },
    };
    await this.ctx.commands.run(metadataOf(meta), async () => ({
      appends: [{ streamId: queueStream(queueId), expectedVersion: -1, events: [event] }],
      result: undefined,
    }));
    const wantedNames = params.fetch_event_types ?? params.event_types;
    // One snapshot of the read tables: they all stand at the same log position (the runner moves
    // them together), and events after it are what the queue delivers.
    const { state, position } = await this.ctx.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const cp = await trx.selectFrom('checkpoints').select((eb) => eb.fn.min('position').as('p')).executeTakeFirstOrThrow();
        const freshUser = await trx.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
        const freshRealm = await trx.selectFrom('realms').selectAll().where('id', '=', realm.id).executeTakeFirstOrThrow();
        const state = await fetchSections({
          trx,
          user: freshUser,
          realm: freshRealm,
          options,
          config: this.ctx.config,
          wanted: wantedNames ? new Set(wantedNames) : null,
          presenceLocal: (userId) => this.ctx.presence.tracker.local(userId),
        });
        return { state, position: Number(cp.p) };
      });
    const lastEventId = snapshotId(position);
    await this.ctx.db
      .insertInto('event_queue_cursors')
      .values({ queue_id: queueId, acked_id: lastEventId, last_access: Date.now() })
      .onConflict((oc) => oc.column('queue_id').doNothing())
      .execute();
    return {
      queue_id: queueId,
      last_event_id: lastEventId,
      zulip_version: ZULIP_VERSION,
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_merge_base: ZULIP_MERGE_BASE,
      ...state,
    };
  }

  private async loadQueue(queueId: string, user: UserRow) {
    const queue = await this.readQueue(queueId);
    if (!queue || queue.user_id !== user.id) throw errors.badEventQueue(queueId);
    const stored = Math.max(queue.acked_id !== null ? Number(queue.acked_id) : snapshotId(Number(queue.registered_position)), this.cursors.pending(queueId) ?? 0);
    return { queue, ackedId: stored };
  }

  private readQueue(queueId: string) {
    return this.ctx.db
      .selectFrom('event_queues as q')
      .leftJoin('event_queue_cursors as c', 'c.queue_id', 'q.id')
      .selectAll('q')
      .select('c.acked_id')
      .where('q.id', '=', queueId)
      .executeTakeFirst();
  }

  /** loadQueue for a poll: from the cache when it can vouch for the queue, else read and cached. */
  private async loadQueueForPoll(queueId: string, user: UserRow) {
    const { entry, mark } = await this.queueCache.get(queueId);
    if (entry) {
      if (entry.row.user_id !== user.id) throw errors.badEventQueue(queueId);
      return { queue: entry.row, entry };
    }
    const { queue, ackedId } = await this.loadQueue(queueId, user);
    return { queue, entry: this.queueCache.set(queueId, queue, ackedId, mark) };
  }

  async getEvents(
    user: UserRow,
    realm: RealmRow,
    queueId: string,
    lastEventId: number | undefined,
    dontBlock: boolean,
    clientGone?: ClientGone,
  ): Promise<{ events: ClientEvent[]; queue_id: string }> {
    const { queue, entry } = await this.loadQueueForPoll(queueId, user);
    const stored = Math.max(entry.ackedId, this.cursors.pending(queueId) ?? 0);
    if (lastEventId !== undefined && lastEventId > stored) await this.assertSent(lastEventId, stored);
    const ackedId = Math.max(stored, lastEventId ?? stored);
    entry.ackedId = ackedId;
    this.cursors.record(queueId, ackedId);
    const recipient: Recipient = { user: slimUser(user), realm, queue: queue.options as unknown as QueueOptions, queueId };
    // A command answered at commit (a presence change) is folded just after its answer; a poll
    // that will not block must still find its events, as it finds any other answered command's.
    const answered = this.ctx.commands.answeredPosition;
    if (dontBlock && answered > this.ctx.projectedPosition()) await this.ctx.waitForProjections(answered, 2_000);
    for (;;) {
      const upTo = this.ctx.projectedPosition();
      const { events, reached } = await this.hub.pending(recipient, ackedId, upTo);
      if (events.length > 0 || dontBlock) return { events, queue_id: queueId };
      // Nothing new. Blocking is safe only if the hub has not yet offered events past what we read
      // (it offers everything after its scanned position to blocked polls); otherwise read the gap.
      if (this.hub.scannedPosition > reached) continue;
      const waited = await this.block(recipient, ackedId, clientGone);
      if (waited.length > 0) return { events: waited, queue_id: queueId };
      // Heartbeat: an id above everything delivered and below any future event.
      const head = Math.max(this.hub.scannedPosition, positionOf(ackedId));
      const base = clientEventId(head, HEARTBEAT_BASE);
      const id = positionOf(ackedId) === head && slotOf(ackedId) >= HEARTBEAT_BASE ? Math.min(ackedId + 1, clientEventId(head, 999)) : base;
      this.cursors.record(queueId, ackedId);
      return { events: [{ type: 'heartbeat', id }], queue_id: queueId };
    }
  }

  /**
   * An acknowledged id past anything the queue can have sent would become its cursor and silence it
   * until the log caught up with it; the real server refuses such an id the same way. Every id a
   * queue sends (heartbeats too) lies at a log position it had already seen, so one past the log's
   * head was never sent. The head is read only when this process has not seen that far itself.
   */
  private async assertSent(lastEventId: number, stored: number): Promise<void> {
    const position = positionOf(lastEventId);
    if (position <= Math.max(this.hub.scannedPosition, this.ctx.projectedPosition(), positionOf(stored))) return;
    if (position <= (await this.ctx.store.head()).position) return;
    throw errors.badRequest(`Event ${lastEventId} was not in this queue`);
  }

  private block(recipient: Recipient, afterId: number, clientGone?: ClientGone): Promise<ClientEvent[]> {
    return new Promise((resolve) => {
      const poll = {
        recipient,
        afterId,
        resolve: (events: ClientEvent[]) => {
          clearTimeout(timer);
          stopListening?.();
          resolve(events);
        },
      };
      const release = () => {
        this.hub.remove(poll);
        poll.resolve([]);
      };
      const timer = setTimeout(release, this.ctx.config.heartbeatSeconds * 1000);
      const stopListening = clientGone?.(release);
      this.hub.add(poll);
    });
  }

  async deleteQueue(meta: RequestMeta, user: UserRow, queueId: string, reason: 'client' | 'expired' = 'client'): Promise<void> {
    await this.loadQueue(queueId, user);
    await this.ctx.commands.run(metadataOf(meta), async () => ({
      appends: [{ streamId: queueStream(queueId), expectedVersion: 1, events: [{ type: 'QueueDeleted', data: { queue_id: queueId, user_id: user.id, reason } }] }],
      result: undefined,
    }));
    this.cursors.forget(queueId);
    this.queueCache.delete(queueId);
    await this.ctx.db.deleteFrom('event_queue_cursors').where('queue_id', '=', queueId).execute();
  }

  /** Removes queues nobody has read for longer than their lifespan; runs on a slow timer. */
  async expireIdleQueues(now = Date.now()): Promise<number> {
    const idle = await this.ctx.db
      .selectFrom('event_queues as q')
      .leftJoin('event_queue_cursors as c', 'c.queue_id', 'q.id')
      .select(['q.id', 'q.user_id', 'q.realm_id', 'q.lifespan_secs', 'q.created_at', 'c.last_access'])
      .execute();
    let expired = 0;
    for (const q of idle) {
      if (this.cursors.pending(q.id) !== undefined) continue; // read moments ago; not written yet
      const last = q.last_access !== null ? Number(q.last_access) : Number(q.created_at) * 1000;
      if (last + q.lifespan_secs * 1000 > now) continue;
      const meta = { actorId: null, realmId: q.realm_id, client: 'queue-gc', requestId: randomUUID(), now: new Date(now) };
      try {
        await this.ctx.commands.run(metadataOf(meta), async () => ({
          appends: [{ streamId: queueStream(q.id), expectedVersion: 1, events: [{ type: 'QueueDeleted', data: { queue_id: q.id, user_id: q.user_id, reason: 'expired' } }] }],
          result: undefined,
        }));
        this.cursors.forget(q.id);
        this.queueCache.delete(q.id);
        await this.ctx.db.deleteFrom('event_queue_cursors').where('queue_id', '=', q.id).execute();
        expired += 1;
      } catch {
        // another process expired it first
      }
    }
    return expired;
  }

  startSweeper(intervalMs = 60_000): void {
    this.sweeper = setInterval(() => void this.expireIdleQueues().catch(() => undefined), intervalMs);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.cursors.stop();
    this.hub.releaseAll();
  }

  /** Writes the cursors still pending (before the database closes). */
  flushCursors(): Promise<void> {
    return this.cursors.flush();
  }
}

/**
 * A blocked poll keeps its recipient alive for up to a heartbeat interval: keep only what
 * translators read (id, role, realm, the typing setting), not the whole settings object and secrets.
 */
function slimUser(user: UserRow): UserRow {
  const settings = user.settings as Record<string, unknown>;
  return {
    ...user,
    api_key: '',
    password_hash: null,
    profile_data: {},
    settings: { receives_typing_notifications: settings.receives_typing_notifications },
  };
}
