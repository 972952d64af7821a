// Channel, topic and message links: `#**channel**`, `#**channel>topic**`, `#**channel>topic@123**`.
import type { RenderState } from './state.js';
import { topicLinkKey } from './types.js';
import { element, text, type MdNode } from './tree.js';
import { channelNarrowUrl, encodeHashComponent } from './urls.js';

// What the real server calls the empty topic (Message.EMPTY_TOPIC_FALLBACK_NAME).
const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';

export function renderChannelLink(atom: string, state: RenderState): MdNode[] {
  const body = atom.slice(3, -2);
  const separator = body.indexOf('>');
  const channelName = separator === -1 ? body : body.slice(0, separator);
  const channel = state.ctx.channelByName(channelName);
  // Unknown: the markers stay text, for the emphasis patterns to read.
  if (!channel) return [text(atom)];
  const channelUrl = channelNarrowUrl(channel);
  if (separator === -1) {
    return [element('a', { className: ['stream'], dataStreamId: String(channel.id), href: channelUrl }, [text(`#${channel.name}`)])];
  }
  let topic = body.slice(separator + 1);
  const messageId = /@(\d+)$/.exec(topic);
  if (messageId) {
    topic = topic.slice(0, messageId.index);
    const href = `${channelUrl}/topic/${encodeHashComponent(topic)}/near/${messageId[1]}`;
    return [element('a', { className: ['message-link'], href }, [...channelAndTopic(channel.name, topic), text(' @ 💬')])];
  }
  const first = state.ctx.topicLinkTargets?.get(topicLinkKey(channel.id, topic));
  const href = `${channelUrl}/topic/${encodeHashComponent(topic)}${first === undefined ? '' : `/with/${first}`}`;
  return [element('a', { className: ['stream-topic'], dataStreamId: String(channel.id), href }, channelAndTopic(channel.name, topic))];
}

/** The link text "#channel > topic"; the empty topic is shown by its display name, in italics. */
function channelAndTopic(channelName: string, topic: string): MdNode[] {
  if (topic === '') return [text(`#${channelName} > `), element('em', {}, [text(EMPTY_TOPIC_DISPLAY_NAME)])];
  return [text(`#${channelName} > ${topic}`)];
}
