import { ApiError, errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import { isAdminRole } from '../roles.js';
import type { LinkifierEvent } from './events.js';
import { compileRe2, namedGroups, Re2PatternError } from './re2-pattern.js';
import { templateVariables } from './url-template.js';

export const MAX_PATTERN_LENGTH = 1000;
export const MAX_URL_TEMPLATE_LENGTH = 1024;

export interface LinkifierRow {
  id: number;
  pattern: string;
  url_template: string;
  order: number;
}

/** A realm's linkifiers, in order. */
export interface LinkifiersState {
  realm_id: number;
  linkifiers: readonly LinkifierRow[];
}

export interface Actor {
  user_id: number;
  role: number;
}

export type LinkifierCommand =
  | { type: 'AddLinkifier'; actor: Actor; linkifier_id: number; pattern: string; url_template: string }
  | { type: 'UpdateLinkifier'; actor: Actor; linkifier_id: number; pattern: string; url_template: string }
  | { type: 'RemoveLinkifier'; actor: Actor; linkifier_id: number }
  | { type: 'ReorderLinkifiers'; actor: Actor; ordered_linkifier_ids: readonly number[] };

export const linkifierNotFound = () => errors.badRequest('Linkifier not found.');

/** A validation failure the way the real server's form validation reports it: first message, plus all of them. */
function invalid(field: string, message: string): ApiError {
  return new ApiError('BAD_REQUEST', 400, message, { errors: { [field]: [message] } });
}

/** Checks a pattern and URL template pair; gives the pattern's named groups. */
export function validateLinkifier(pattern: string, urlTemplate: string): void {
  if (pattern.trim() === '') throw invalid('pattern', 'This field cannot be blank.');
  if (pattern.length > MAX_PATTERN_LENGTH) throw invalid('pattern', `Ensure this value has at most ${MAX_PATTERN_LENGTH} characters (it has ${pattern.length}).`);
  if (urlTemplate.trim() === '') throw invalid('url_template', 'This field cannot be blank.');
  if (urlTemplate.length > MAX_URL_TEMPLATE_LENGTH) {
    throw invalid('url_template', `Ensure this value has at most ${MAX_URL_TEMPLATE_LENGTH} characters (it has ${urlTemplate.length}).`);
  }
  let groups: Set<string>;
  try {
    groups = new Set(namedGroups(compileRe2(pattern)));
  } catch (error) {
    if (!(error instanceof Re2PatternError)) throw error;
    throw invalid('pattern', `Bad regular expression: ${error.message}`);
  }
  const variables = templateVariables(urlTemplate);
  if (variables === null) throw invalid('url_template', 'Invalid URL template.');
  // The real server checks the expanded template with a URL validator (http, https, ftp, ftps):
  // a javascript: or data: template would only ever make a link that rendering has to drop.
  if (!/^(https?|ftps?):\/\//i.test(urlTemplate.trim())) throw invalid('url_template', 'Invalid URL template.');
  for (const name of variables) {
    if (!groups.has(name)) throw invalid('__all__', `Group '${name}' in URL template is not present in linkifier pattern.`);
  }
  const used = new Set(variables);
  for (const name of groups) {
    if (!used.has(name)) throw invalid('__all__', `Group '${name}' in linkifier pattern is not present in URL template.`);
  }
}

const requireAdmin = (actor: Actor) => {
  if (!isAdminRole(actor.role)) throw errors.mustBeAdmin();
};

/** Pure: a command on a realm's linkifiers gives the events to record, or a catalog error. */
export function decideLinkifiers(command: LinkifierCommand, state: LinkifiersState): LinkifierEvent[] {
  const realm_id = state.realm_id;
  const exists = (id: number) => state.linkifiers.some((l) => l.id === id);
  switch (command.type) {
    case 'AddLinkifier': {
      requireAdmin(command.actor);
      validateLinkifier(command.pattern, command.url_template);
      if (state.linkifiers.some((l) => l.pattern === command.pattern)) {
        throw invalid('__all__', 'Linkifier with this Pattern and Realm already exists.');
      }
      const order = state.linkifiers.reduce((max, l) => Math.max(max, l.order + 1), 0);
      return [{
        type: 'LinkifierAdded',
        data: { realm_id, linkifier_id: command.linkifier_id, pattern: command.pattern, url_template: command.url_template, order },
      }];
    }
    case 'UpdateLinkifier': {
      requireAdmin(command.actor);
      if (!exists(command.linkifier_id)) throw linkifierNotFound();
      validateLinkifier(command.pattern, command.url_template);
      if (state.linkifiers.some((l) => l.pattern === command.pattern && l.id !== command.linkifier_id)) {
        throw invalid('__all__', 'Linkifier with this Pattern and Realm already exists.');
      }
      return [{
        type: 'LinkifierUpdated',
        data: { realm_id, linkifier_id: command.linkifier_id, pattern: command.pattern, url_template: command.url_template },
      }];
    }
    case 'RemoveLinkifier':
      requireAdmin(command.actor);
      if (!exists(command.linkifier_id)) throw linkifierNotFound();
      return [{ type: 'LinkifierRemoved', data: { realm_id, linkifier_id: command.linkifier_id } }];
    case 'ReorderLinkifiers': {
      requireAdmin(command.actor);
      const ids = command.ordered_linkifier_ids;
      if (new Set(ids).size !== ids.length) throw errors.badRequest('The ordered list must not contain duplicated linkifiers');
      if (ids.length !== state.linkifiers.length || !ids.every(exists)) {
        throw errors.badRequest('The ordered list must enumerate all existing linkifiers exactly once');
      }
      return [{ type: 'LinkifiersReordered', data: { realm_id, ordered_linkifier_ids: [...ids] } }];
    }
    default:
      return assertNever(command);
  }
}

/** Pure: the realm's ordered list after one event (used to rebuild the list as of any event). */
export function evolveLinkifiers(list: readonly LinkifierRow[], event: LinkifierEvent): LinkifierRow[] {
  switch (event.type) {
    case 'LinkifierAdded':
      return [...list, { id: event.data.linkifier_id, pattern: event.data.pattern, url_template: event.data.url_template, order: event.data.order }];
    case 'LinkifierUpdated':
      return list.map((l) => (l.id === event.data.linkifier_id ? { ...l, pattern: event.data.pattern, url_template: event.data.url_template } : l));
    case 'LinkifierRemoved':
      return list.filter((l) => l.id !== event.data.linkifier_id);
    case 'LinkifiersReordered': {
      const order = new Map(event.data.ordered_linkifier_ids.map((id, i) => [id, i]));
      return list.map((l) => ({ ...l, order: order.get(l.id) ?? l.order })).sort((a, b) => a.order - b.order || a.id - b.id);
    }
    default:
      return assertNever(event);
  }
}
