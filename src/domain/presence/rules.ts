/** The real server's presence constants (zproject/default_settings.py at feature level 247). */
export const PRESENCE_PING_INTERVAL_SECS = 60;
export const OFFLINE_THRESHOLD_SECS = 140;
/** A ping closer than this to the stored time does not move it (several open windows). */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
/** Legacy format: "active" while the last activity is at most this much older than the last connection. */
export const ACTIVITY_OFFSET_SECS = 70;
/** Users whose last connection is older than this are left out of presence dictionaries. */
export const PRESENCE_HISTORY_SECS = 14 * 24 * 3600;
/** Turning presence off makes the user look last seen this long before (the real server's fudge). */
export const DISABLED_PRESENCE_AGE_SECS = OFFLINE_THRESHOLD_SECS + 120;
