/** What a command hands to the store: the store adds position, version, ids and hash. */
export interface NewEvent {
  readonly type: string;
  readonly data: Record<string, unknown>;
  /** Omitted: the type's current version (see currentSchemaVersion in upcast.ts). */
  readonly schemaVersion?: number;
}

export interface EventMetadata {
  readonly actor_id: number | null;
  readonly realm_id: number;
  readonly client: string;
  readonly request_id: string;
  /** ISO 8601; comes from the command, never from the database clock. */
  readonly time: string;
  readonly [key: string]: unknown;
}

export interface StoredEvent {
  readonly position: number;
  readonly event_id: string;
  readonly stream_id: string;
  readonly stream_version: number;
  readonly type: string;
  readonly schema_version: number;
  readonly data: Record<string, unknown>;
  readonly metadata: EventMetadata;
  readonly hash: string;
}

/** -1: the stream must not exist yet; undefined: append whatever the version. */
export type ExpectedVersion = number | undefined;

export interface StreamAppend {
  readonly streamId: string;
  readonly expectedVersion: ExpectedVersion;
  readonly events: readonly NewEvent[];
}

export class StreamVersionConflict extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`stream ${streamId} is at version ${actual}, expected ${expected}`);
  }
}

/** Every column of an `events` row, in the order the log is read. */
export const EVENT_COLUMNS = ['position', 'event_id', 'stream_id', 'stream_version', 'type', 'schema_version', 'data', 'metadata', 'hash'] as const;
