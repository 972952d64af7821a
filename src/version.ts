/**
 * The API level whose behaviour this server implements. Clients gate features on it; keep it
 * true: raise it only when the behaviour of the new level is in place.
 */
export const ZULIP_FEATURE_LEVEL = 275;
export const ZULIP_VERSION = '10.0-es';
export const ZULIP_MERGE_BASE = '10.0-es';
