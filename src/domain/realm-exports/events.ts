import type { Event } from '../event-types.js';

/**
 * An owner asked for an export of the organization (POST /export/realm). The export is the log
 * itself, written in the background; one of Finished or Failed follows on the same stream.
 * Times are UNIX seconds, as the real server reports them.
 */
export type RealmExportRequested = Event<'RealmExportRequested', { export_id: number; realm_id: number; acting_user_id: number; export_time: number }>;

/** The log (as it was when the export ran) was written to storage at `path_id` (the data keys and signatures beside it). */
export type RealmExportFinished = Event<'RealmExportFinished', { export_id: number; realm_id: number; path_id: string; size: number; event_count: number }>;

export type RealmExportFailed = Event<'RealmExportFailed', { export_id: number; realm_id: number; failed_timestamp: number; reason: string }>;

/** An owner deleted a finished export (DELETE /export/realm/{export_id}); its files are removed after this commits. */
export type RealmExportDeleted = Event<'RealmExportDeleted', { export_id: number; realm_id: number; deleted_timestamp: number }>;

export type RealmExportEvent = RealmExportRequested | RealmExportFinished | RealmExportFailed | RealmExportDeleted;
