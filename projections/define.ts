import type { Projection, Trx } from '../src/projections-api.js';
import type { DataOf, DomainEventType } from '../src/domain/events.js';
import type { StoredEvent } from '../src/eventstore/types.js';

type Handlers = { [T in DomainEventType]?: (trx: Trx, data: DataOf<T>, event: StoredEvent) => Promise<void> };

/** Builds a projection from one handler per event type it folds; `handles` follows from them. */
export function defineProjection(spec: { name: string; version: number; tables: string[]; handlers: Handlers }): Projection {
  const handlers = spec.handlers as Record<string, (trx: Trx, data: unknown, event: StoredEvent) => Promise<void>>;
  return {
    name: spec.name,
    version: spec.version,
    tables: spec.tables,
    handles: new Set(Object.keys(handlers)),
    apply: (trx, event) => handlers[event.type]!(trx, event.data, event),
  };
}
