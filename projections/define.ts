import type { Projection, Trx } from '../src/projections-api.js';
import type { DataOf, DomainEventType } from '../src/domain/events.js';
import type { StoredEvent } from '../src/eventstore/types.js';

/** A handler may answer 'unchanged' when the event left its tables as they were. */
export type HandlerResult = void | 'unchanged';
type Handlers = { [T in DomainEventType]?: (trx: Trx, data: DataOf<T>, event: StoredEvent) => Promise<HandlerResult> };

/** One event of a run handed to a bulk handler. */
export interface RunEvent<T extends DomainEventType> {
  readonly data: DataOf<T>;
  readonly event: StoredEvent;
}
/**
 * A bulk handler folds a run of consecutive events of its type, in log order, and must leave the
 * tables exactly as its one-event handler applied to each in turn would. The runner folds a run
 * projection by projection (not event by event across projections), so it uses bulk handlers for
 * a type only when every projection folding that type has one: declaring one promises that this
 * projection's fold of the type reads no table another projection's fold of the same type writes.
 */
type BulkHandlers = { [T in DomainEventType]?: (trx: Trx, run: ReadonlyArray<RunEvent<T>>) => Promise<HandlerResult> };

/** Builds a projection from one handler per event type it folds; `handles` follows from them. */
export function defineProjection(spec: { name: string; version: number; tables: string[]; handlers: Handlers; bulk?: BulkHandlers }): Projection {
  const handlers = spec.handlers as Record<string, (trx: Trx, data: unknown, event: StoredEvent) => Promise<HandlerResult>>;
  const bulk = (spec.bulk ?? {}) as Record<string, (trx: Trx, run: ReadonlyArray<RunEvent<DomainEventType>>) => Promise<HandlerResult>>;
  for (const type of Object.keys(bulk)) if (!handlers[type]) throw new Error(`${spec.name}: bulk handler for ${type} without a handler`);
  return {
    name: spec.name,
    version: spec.version,
    tables: spec.tables,
    handles: new Set(Object.keys(handlers)),
    apply: async (trx, event) => (await handlers[event.type]!(trx, event.data, event)) !== 'unchanged',
    bulkTypes: new Set(Object.keys(bulk)),
    applyRun: async (trx, events) => {
      const type = events[0]!.type;
      const run = events.map((event) => ({ data: event.data as never, event }));
      return (await bulk[type]!(trx, run)) !== 'unchanged';
    },
  };
}
