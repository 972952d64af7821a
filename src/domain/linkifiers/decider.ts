import { ApiError, errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import { isAdminRole } from '../roles.js';
import type { LinkifierEvent } from './events.js';
import { compileRe2, namedGroups, Re2PatternError } from './re2-pattern.js';
import { scriptCapableScheme, templateVariables } from './url-template.js';

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

/**
 * The real server validates a linkifier as a Django model's full_clean does: each field's own
 * checks (blank, then the URL template's RFC 6570 grammar), then the model's clean (the pattern
 * compiles as RE2, the template's variables match the pattern's named groups) even when a field
 * failed, then the (realm, pattern) uniqueness unless the pattern failed. Every failure is kept,
 * by field in that order; the error message is the first of them.
 */
export function linkifierProblems(pattern: string, urlTemplate: string, patternTaken: boolean): Record<string, string[]> {
  const problems: Record<string, string[]> = {};
  const add = (field: string, message: string) => { (problems[field] ??= []).push(message); };
  if (pattern === '') add('pattern', 'This field cannot be blank.');
  const variables = templateVariables(urlTemplate);
  if (urlTemplate === '') add('url_template', 'This field cannot be blank.');
  else if (variables === null || scriptCapableScheme(urlTemplate)) add('url_template', 'Invalid URL template.');
  const clean = cleanProblem(pattern, variables);
  if (clean) add('__all__', clean);
  if (problems.pattern === undefined && patternTaken) add('__all__', 'Linkifier with this Pattern and Realm already exists.');
  return problems;
}

/** The model's clean: the first problem with the pattern or the groups it shares with the template. */
function cleanProblem(pattern: string, variables: string[] | null): string | null {
  let groups: Set<string>;
  try {
    groups = new Set(namedGroups(compileRe2(pattern)));
  } catch (error) {
    if (!(error instanceof Re2PatternError)) throw error;
    return `Bad regular expression: ${error.message}`;
  }
  // An invalid template is reported once, by its own field.
  if (variables === null) return null;
  const used = new Set(variables);
  // The alphabetically first name is reported, as the real server does.
  const missingInPattern = [...used].filter((name) => !groups.has(name)).sort();
  if (missingInPattern.length > 0) return `Group '${missingInPattern[0]}' in URL template is not present in linkifier pattern.`;
  const missingInTemplate = [...groups].filter((name) => !used.has(name)).sort();
  if (missingInTemplate.length > 0) return `Group '${missingInTemplate[0]}' in linkifier pattern is not present in URL template.`;
  return null;
}

/** Throws the real server's validation error (first message, plus every failure by field). */
function validateLinkifier(pattern: string, urlTemplate: string, patternTaken: boolean): void {
  const problems = linkifierProblems(pattern, urlTemplate, patternTaken);
  const first = Object.values(problems)[0]?.[0];
  if (first !== undefined) throw new ApiError('BAD_REQUEST', 400, first, { errors: problems });
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
      validateLinkifier(command.pattern, command.url_template, state.linkifiers.some((l) => l.pattern === command.pattern));
      const order = state.linkifiers.reduce((max, l) => Math.max(max, l.order + 1), 0);
      return [{
        type: 'LinkifierAdded',
        data: { realm_id, linkifier_id: command.linkifier_id, pattern: command.pattern, url_template: command.url_template, order },
      }];
    }
    case 'UpdateLinkifier': {
      requireAdmin(command.actor);
      if (!exists(command.linkifier_id)) throw linkifierNotFound();
      validateLinkifier(
        command.pattern,
        command.url_template,
        state.linkifiers.some((l) => l.pattern === command.pattern && l.id !== command.linkifier_id),
      );
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
      // Nothing to reorder: nothing recorded, no event (as on the real server).
      if (ids.length === 0) return [];
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
