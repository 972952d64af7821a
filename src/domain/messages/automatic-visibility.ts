/**
 * The topic visibility policy a send sets for its sender, from their automatic follow / unmute
 * settings (the real server's rules since feature level 214).
 *
 * Settings: 1 on participation, 2 on send, 3 on initiation (starting the topic), 4 never.
 * Policies: 0 inherit, 1 muted, 2 unmuted, 3 followed. Following wins over unmuting.
 */

const ON_PARTICIPATION = 1;
const ON_SEND = 2;
const ON_INITIATION = 3;
const INHERIT = 0;
const UNMUTED = 2;
const FOLLOWED = 3;

export interface AutomaticSettings {
  follow: number;
  unmute: number;
}

export interface TopicVisibility {
  /** the sender's current policy for the topic */
  policy: number;
  /** the sender has muted the channel (unmuting applies only there) */
  channelMuted: boolean;
  /** the sender can see no earlier message in the topic */
  startsTopic: boolean;
}

/** The new policy, or null when sending leaves the sender's policy as it is. */
export function automaticVisibilityPolicy(settings: AutomaticSettings, topic: TopicVisibility): number | null {
  if (topic.policy === FOLLOWED) return null;
  // Sending a message is both participating and sending.
  const triggered = (when: number) => settings.follow === when ? FOLLOWED : topic.channelMuted && settings.unmute === when ? UNMUTED : null;
  const now = [triggered(ON_PARTICIPATION), triggered(ON_SEND)];
  if (now.includes(FOLLOWED)) return FOLLOWED;
  let policy = now.includes(UNMUTED) ? UNMUTED : null;
  // A topic with a policy set was not started by this send.
  if (topic.policy !== INHERIT) return policy === topic.policy ? null : policy;
  if (topic.startsTopic) {
    if (settings.follow === ON_INITIATION) return FOLLOWED;
    if (topic.channelMuted && settings.unmute === ON_INITIATION) policy = UNMUTED;
  }
  return policy;
}
