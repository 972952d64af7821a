import { ApiError, errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import { isAdminRole } from '../roles.js';
import { scriptCapableScheme, templateVariables } from '../linkifiers/url-template.js';
import type { PlaygroundEvent } from './events.js';

export interface PlaygroundRow {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

export interface PlaygroundsState {
  realm_id: number;
  playgrounds: readonly PlaygroundRow[];
}

export interface Actor {
  user_id: number;
  role: number;
}

export type PlaygroundCommand =
  | { type: 'AddPlayground'; actor: Actor; playground_id: number; name: string; pygments_language: string; url_template: string }
  | { type: 'RemovePlayground'; actor: Actor; playground_id: number };

const MAX_LANGUAGE_LENGTH = 40;
// As the real server's pattern reads it: `+-.` is a range, so ',' is allowed too.
const LANGUAGE_CHARACTERS = /^[ a-zA-Z0-9_+,\-./#]*$/;

/** The request's own check of the language, made before the playground is looked at. */
function checkLanguageParameter(language: string): void {
  if ([...language].length > MAX_LANGUAGE_LENGTH) throw errors.badRequest(`pygments_language is too long (limit: ${MAX_LANGUAGE_LENGTH} characters)`);
  if (!LANGUAGE_CHARACTERS.test(language)) throw errors.badRequest('Invalid characters in pygments language');
}

/**
 * The real server's RealmPlayground.full_clean on the stripped values: each field's checks (URL
 * template, name, language), then the model's clean (`code` the one template variable) even when
 * a field failed, then uniqueness by language and name unless one of those failed. Every failure
 * is kept by field; the first is the message.
 */
export function playgroundProblems(name: string, language: string, urlTemplate: string, taken: boolean): Record<string, string[]> {
  const problems: Record<string, string[]> = {};
  const add = (field: string, message: string) => { (problems[field] ??= []).push(message); };
  const variables = urlTemplate === '' ? null : templateVariables(urlTemplate);
  if (urlTemplate === '') add('url_template', 'This field cannot be blank.');
  else if (variables === null || scriptCapableScheme(urlTemplate)) add('url_template', 'Invalid URL template.');
  if (name === '') add('name', 'This field cannot be blank.');
  if (language === '') add('pygments_language', 'This field cannot be blank.');
  if (variables !== null) {
    const names = new Set(variables);
    if (!names.has('code')) add('__all__', 'Missing the required variable "code" in the URL template');
    else if (names.size !== 1) add('__all__', '"code" should be the only variable present in the URL template');
  }
  if (problems.name === undefined && problems.pygments_language === undefined && taken) {
    add('__all__', 'Realm playground with this Realm, Pygments language and Name already exists.');
  }
  return problems;
}

/** Pure: a command on a realm's code playgrounds gives the events to record, or a catalog error. */
export function decidePlaygrounds(command: PlaygroundCommand, state: PlaygroundsState): PlaygroundEvent[] {
  if (!isAdminRole(command.actor.role)) throw errors.mustBeAdmin();
  const realm_id = state.realm_id;
  switch (command.type) {
    case 'AddPlayground': {
      checkLanguageParameter(command.pygments_language);
      // Stored without surrounding whitespace, as the real server strips all three.
      const [name, pygments_language, url_template] = [command.name.trim(), command.pygments_language.trim(), command.url_template.trim()];
      const taken = state.playgrounds.some((p) => p.name === name && p.pygments_language === pygments_language);
      const problems = playgroundProblems(name, pygments_language, url_template, taken);
      const first = Object.values(problems)[0]?.[0];
      if (first !== undefined) throw new ApiError('BAD_REQUEST', 400, first, { errors: problems });
      const { playground_id } = command;
      return [{ type: 'PlaygroundAdded', data: { realm_id, playground_id, name, pygments_language, url_template } }];
    }
    case 'RemovePlayground':
      if (!state.playgrounds.some((p) => p.id === command.playground_id)) throw errors.badRequest('Invalid playground');
      return [{ type: 'PlaygroundRemoved', data: { realm_id, playground_id: command.playground_id } }];
    default:
      return assertNever(command);
  }
}

/** Pure: the realm's playgrounds after one event. */
export function evolvePlaygrounds(list: readonly PlaygroundRow[], event: PlaygroundEvent): PlaygroundRow[] {
  switch (event.type) {
    case 'PlaygroundAdded': {
      const { playground_id: id, name, pygments_language, url_template } = event.data;
      return [...list, { id, name, pygments_language, url_template }];
    }
    case 'PlaygroundRemoved':
      return list.filter((p) => p.id !== event.data.playground_id);
    default:
      return assertNever(event);
  }
}
