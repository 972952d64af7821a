/**
 * What a new organization starts with, as the real server creates it (do_create_realm and
 * send_initial_realm_messages): the public default channel, the private channel of its creator,
 * and Welcome Bot's first messages in each, in the order the server sends them.
 */
export const ANNOUNCEMENTS_CHANNEL = {
  name: 'general',
  description: 'Everyone is added to this channel by default. Welcome! :octopus:',
  invite_only: false,
  is_default: true,
};

export const CORE_TEAM_CHANNEL = {
  name: 'core team',
  description: 'A private channel for core team members.',
  invite_only: true,
  is_default: false,
};

/** Where the real server posts its own update announcements. */
export const ZULIP_UPDATES_TOPIC = 'Zulip updates';

export interface WelcomeMessage {
  channel: string;
  topic: string;
  content: string;
  /** An emoji Welcome Bot reacts with to its own message. */
  reaction?: string;
}

export function welcomeMessages(): WelcomeMessage[] {
  const general = ANNOUNCEMENTS_CHANNEL.name;
  const coreTeam = CORE_TEAM_CHANNEL.name;
  return [
    {
      channel: coreTeam,
      topic: 'private channels',
      content:
        'This is a private channel, as indicated by the lock icon next to the channel name. '
        + 'Private channels are only visible to channel members.\n\n'
        + `To manage this channel, go to [Channel settings](#channels/subscribed) and click on \`${coreTeam}\`.`,
    },
    {
      channel: general,
      topic: 'topic demonstration',
      content: `This is a message on channel #**${general}** with the topic \`topic demonstration\`.`,
    },
    {
      channel: general,
      topic: 'topic demonstration',
      content:
        'Topics are a lightweight tool to keep conversations organized. '
        + 'You can learn more about topics at [Introduction to topics](/help/introduction-to-topics).',
    },
    {
      channel: general,
      topic: 'swimming turtles',
      content:
        `This is a message on channel #**${general}** with the topic \`swimming turtles\`.\n\n`
        + '[](/static/images/cute/turtle.png)\n\n'
        + "[Start a new topic](/help/introduction-to-topics#how-to-start-a-new-topic) any time you're not replying to a previous message.",
      reaction: 'turtle',
    },
    {
      channel: general,
      topic: ZULIP_UPDATES_TOPIC,
      content:
        'Welcome! To help you learn about new features and configuration options, '
        + 'this topic will receive messages about important changes in Zulip.\n\n'
        + "You can read these update messages whenever it's convenient, or "
        + '[mute](/help/mute-a-topic) this topic if you are not interested. '
        + 'If your organization does not want to receive these announcements, '
        + 'they can be disabled. [Learn more](/help/configure-automated-notices#zulip-update-announcements).',
    },
  ];
}
