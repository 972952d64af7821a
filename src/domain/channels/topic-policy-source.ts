/**
 * Under which message's key a topic preference set by a send or a move names its topic, so that
 * forgetting a message never leaves its topic behind and a replay after forgetting folds what the
 * live tables hold (projections/channels.ts drops a forgotten message's preferences; a replay
 * skips their events).
 *
 * Where the user already has a preference for the topic, the new one keeps that row's source: the
 * topic is in the log under that key already (or in the clear, when the user set it), and a later
 * forgetting of the new message then finds no row of its own to drop that the replay would keep.
 * Otherwise the topic is the causing message's: it is sealed under that message's key.
 *
 * Undefined: the event names the topic in the clear.
 */
export function topicPolicySource(existing: { source: number | null } | undefined, causedBy: number): number | undefined {
  if (!existing) return causedBy;
  return existing.source ?? undefined;
}
