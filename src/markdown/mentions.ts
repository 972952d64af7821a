// User, wildcard and user-group mentions: `@**Name**`, `@**Name|12**`, `@**|12**`, `@**all**`, `@*group*`,
// each with a silent form (`@_…`) that renders without "@" and notifies nobody.
import type { RenderState } from './state.js';
import { element, text, type MdNode } from './tree.js';
import type { MentionableUser } from './types.js';

const channelWildcards = new Set(['all', 'everyone', 'channel', 'stream']);

/** Renders an `@…` atom; unknown names fall back to text. */
export function renderMention(atom: string, state: RenderState): MdNode[] {
  const silent = atom.startsWith('@_');
  const marks = atom.slice(silent ? 2 : 1);
  const isUser = marks.startsWith('**');
  const body = isUser ? marks.slice(2, -2) : marks.slice(1, -1);
  const rendered = isUser ? userMention(body, silent, state) : groupMention(body, silent, state);
  if (rendered) return [rendered];
  // The markers stay text, for the emphasis patterns to read as the real server's do.
  return [text(atom)];
}

function userMention(body: string, silent: boolean, state: RenderState): MdNode | undefined {
  const prefix = silent ? '' : '@';
  // Wildcards are written in lower case: "@**All**" names a user called All, if any.
  const wildcard = body;
  if (channelWildcards.has(wildcard)) {
    if (!silent) state.streamWildcard = true;
    return element('span', { className: ['user-mention', 'channel-wildcard-mention', ...(silent ? ['silent'] : [])], dataUserId: '*' }, [
      text(prefix + wildcard),
    ]);
  }
  if (wildcard === 'topic') {
    if (!silent) state.topicWildcard = true;
    return element('span', { className: ['topic-mention', ...(silent ? ['silent'] : [])] }, [text(prefix + wildcard)]);
  }
  const user = findUser(body, state);
  if (!user) return undefined;
  // A deactivated user's mention renders silent and notifies nobody.
  const quiet = silent || user.isActive === false;
  if (!quiet) state.mentionedUserIds.add(user.id);
  return element('span', { className: ['user-mention', ...(quiet ? ['silent'] : [])], dataUserId: String(user.id) }, [
    text((quiet ? '' : '@') + user.fullName),
  ]);
}

function findUser(body: string, state: RenderState): MentionableUser | undefined {
  const bar = body.lastIndexOf('|');
  if (bar !== -1 && /^\d+$/.test(body.slice(bar + 1))) {
    const name = body.slice(0, bar);
    const user = state.ctx.userById(Number(body.slice(bar + 1)));
    if (!user) return undefined;
    // `@**name|id**` must name that user exactly (the real server compares the names as written).
    return name === '' || user.fullName === name ? user : undefined;
  }
  const users = state.ctx.userByName(body);
  // Several users share this name: only `@**Name|id**` can say which one is meant.
  return users.length === 1 ? users[0] : undefined;
}

function groupMention(body: string, silent: boolean, state: RenderState): MdNode | undefined {
  const group = state.ctx.groupByName(body);
  if (!group) return undefined;
  if (!silent) state.mentionedGroupIds.add(group.id);
  return element('span', { className: ['user-group-mention', ...(silent ? ['silent'] : [])], dataUserGroupId: String(group.id) }, [
    text((silent ? '' : '@') + group.name),
  ]);
}
