import { StreamPostPolicy } from './decider.js';

/**
 * The texts Notification Bot posts about channels, as the real server (feature level 247) words
 * them. Pure: the service decides when to send them and to whom.
 */

/** Where a channel's own notices go. */
export const CHANNEL_EVENTS_TOPIC = 'channel events';

export interface NoticeUser {
  id: number;
  full_name: string;
}

/** Names the user without notifying them. */
export const silentMention = (user: NoticeUser) => `@_**${user.full_name}|${user.id}**`;

export interface ChannelAccess {
  invite_only: boolean;
  history_public_to_subscribers: boolean;
  is_web_public: boolean;
}

/** The organization-facing name of a channel's access policy. */
export function accessPolicyName(access: ChannelAccess): string {
  if (access.is_web_public) return 'Web-public';
  if (!access.invite_only) return access.history_public_to_subscribers ? 'Public' : 'Public, protected history';
  return access.history_public_to_subscribers ? 'Private, shared history' : 'Private, protected history';
}

const NO_DESCRIPTION = '*No description.*';
const quoted = (text: string) => `\n\`\`\`\` quote\n${text === '' ? NO_DESCRIPTION : text}\n\`\`\`\``;

/** Posted in a new channel's "channel events" topic. */
export function channelCreatedNotice(creator: NoticeUser, access: ChannelAccess, description: string): string {
  return `**${accessPolicyName(access)}** channel created by ${silentMention(creator)}. **Description:**${quoted(description)}`;
}

/** The direct message to a user whom someone else subscribed to existing channels. */
export function subscribedYouNotice(actor: NoticeUser, channelNames: readonly string[]): string {
  const names = [...channelNames].sort();
  // A real (notifying) mention here: the recipient is being told who acted.
  const who = `@**${actor.full_name}|${actor.id}**`;
  if (names.length === 1) return `${who} subscribed you to the channel #**${names[0]}**.`;
  return `${who} subscribed you to the following channels:\n\n${names.map((name) => `* #**${name}**\n`).join('')}`;
}

export function renamedNotice(actor: NoticeUser, oldName: string, newName: string): string {
  return `${silentMention(actor)} renamed channel **${oldName}** to **${newName}**.`;
}

export function descriptionChangedNotice(actor: NoticeUser, oldDescription: string, newDescription: string): string {
  return `${silentMention(actor)} changed the description for this channel.\n\n`
    + `* **Old description:**${quoted(oldDescription)}\n`
    + `* **New description:**${quoted(newDescription)}`;
}

export function accessChangedNotice(actor: NoticeUser, before: ChannelAccess, after: ChannelAccess): string {
  return `${silentMention(actor)} changed the [access permissions](/help/channel-permissions) for this channel `
    + `from **${accessPolicyName(before)}** to **${accessPolicyName(after)}**.`;
}

const POST_POLICY_TEXT: Record<number, string> = {
  [StreamPostPolicy.EVERYONE]: 'All channel members can post',
  [StreamPostPolicy.ADMINS]: 'Only organization administrators can post',
  [StreamPostPolicy.MODERATORS]: 'Only organization administrators and moderators can post',
  [StreamPostPolicy.FULL_MEMBERS]: 'Only organization full members can post',
};

export function postPolicyChangedNotice(actor: NoticeUser, oldPolicy: number, newPolicy: number): string {
  return `${silentMention(actor)} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n`
    + `* **Old permissions**: ${POST_POLICY_TEXT[oldPolicy] ?? ''}.\n`
    + `* **New permissions**: ${POST_POLICY_TEXT[newPolicy] ?? ''}.\n`;
}

/**
 * `oldDays`/`newDays`: the effective periods (the organization's where the channel follows it);
 * -1 (or null: the organization keeps messages forever) is "Forever".
 */
export function retentionChangedNotice(actor: NoticeUser, oldDays: number | null, newDays: number | null): string {
  const forever = (days: number | null) => days === null || days === -1;
  const period = (days: number | null) => (forever(days) ? 'Forever' : `${days} days`);
  const summary = forever(newDays)
    ? 'Messages in this channel will now be retained forever.'
    : `Messages in this channel will now be automatically deleted ${newDays} days after they are sent.`;
  return `${silentMention(actor)} has changed the [message retention period](/help/message-retention-policy) for this channel:\n`
    + `* **Old retention period**: ${period(oldDays)}\n`
    + `* **New retention period**: ${period(newDays)}\n\n`
    + summary;
}
