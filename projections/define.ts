import { noFoldMemory, type FoldMemory, type Projection, type Trx } from '../src/projections-api.js';
import type { DataOf, DomainEventType } from '../src/domain/events.js';
import type { StoredEvent } from '../src/eventstore/types.js';

/** A handler may answer 'unchanged' when the event left its tables as they were. */
export type HandlerResult = void | 'unchanged';
type Handlers = { [T in DomainEventType]?: (trx: Trx, data: DataOf<T>, event: StoredEvent, memory: FoldMemory) => Promise<HandlerResult> };

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
type BulkHandlers = { [T in DomainEventType]?: (trx: Trx, run: ReadonlyArray<RunEvent<T>>, memory: FoldMemory) => Promise<HandlerResult> };

/**
 * Per event type: the highest message id whose rows the fold of that event reads or writes, when
 * they are all it touches (see Projection.messagesTouched); undefined when it may touch anything else.
 */
type MessagesTouched = { [T in DomainEventType]?: (data: DataOf<T>) => number | undefined };

/** Builds a projection from one handler per event type it folds; `handles` follows from them. */
export function defineProjection(spec: {
  name: string;
  version: number;
  tables: string[];
  queryIndexes?: string[];
  handlers: Handlers;
  bulk?: BulkHandlers;
  messagesTouched?: MessagesTouched;
  /** See Projection.commutingGroups; the types of a group that has bulk handlers share one. */
  commutingGroups?: DomainEventType[][];
}): Projection {
  const handlers = spec.handlers as Record<string, (trx: Trx, data: unknown, event: StoredEvent, memory: FoldMemory) => Promise<HandlerResult>>;
  const bulk = (spec.bulk ?? {}) as Record<string, (trx: Trx, run: ReadonlyArray<RunEvent<DomainEventType>>, memory: FoldMemory) => Promise<HandlerResult>>;
  const touched = (spec.messagesTouched ?? {}) as Record<string, (data: unknown) => number | undefined>;
  for (const type of Object.keys(bulk)) if (!handlers[type]) throw new Error(`${spec.name}: bulk handler for ${type} without a handler`);
  for (const type of Object.keys(touched)) if (!handlers[type]) throw new Error(`${spec.name}: messagesTouched for ${type} without a handler`);
  for (const group of spec.commutingGroups ?? []) {
    for (const type of group) if (!touched[type]) throw new Error(`${spec.name}: ${type} in a commuting group without messagesTouched`);
    // A run may mix the types of a group: they must all fold in the same bulk handler, or none in bulk.
    const folds = new Set(group.map((type) => bulk[type]));
    if (folds.size !== 1) throw new Error(`${spec.name}: the types of a commuting group need one shared bulk handler or none`);
  }
  return {
    name: spec.name,
    version: spec.version,
    tables: spec.tables,
    queryIndexes: spec.queryIndexes ?? [],
    handles: new Set(Object.keys(handlers)),
    apply: async (trx, event, memory = noFoldMemory) => (await handlers[event.type]!(trx, event.data, event, memory)) !== 'unchanged',
    bulkTypes: new Set(Object.keys(bulk)),
    applyRun: async (trx, events, memory = noFoldMemory) => {
      const type = events[0]!.type;
      const run = events.map((event) => ({ data: event.data as never, event }));
      return (await bulk[type]!(trx, run, memory)) !== 'unchanged';
    },
    messagesTouched: (event) => touched[event.type]?.(event.data),
    commutingGroups: (spec.commutingGroups ?? []).map((group) => new Set(group)),
  };
}
