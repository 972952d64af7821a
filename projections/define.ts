import type { Projection, Trx } from '../src/projections-api.js';
import type { DataOf, DomainEventType } from '../src/domain/events.js';
import type { StoredEvent } from '../src/eventstore/types.js';

/** A handler may answer 'unchanged' when the event left its tables as they were. */
export type HandlerResult = void | 'unchanged';
type Handlers = { [T in DomainEventType]?: (trx: Trx, data: DataOf<T>, event: StoredEvent) => Promise<HandlerResult> };

/** Builds a projection from one handler per event type it folds; `handles` follows from them. */
export function defineProjection(spec: { name: string; version: number; tables: string[]; handlers: Handlers }): Projection {
  const handlers = spec.handlers as Record<string, (trx: Trx, data: unknown, event: StoredEvent) => Promise<HandlerResult>>;
  return {
    name: spec.name,
    version: spec.version,
    tables: spec.tables,
    handles: new Set(Object.keys(handlers)),
    apply: async (trx, event) => (await handlers[event.type]!(trx, event.data, event)) !== 'unchanged',
  };
}
