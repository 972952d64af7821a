import { ApiError, errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import { isAdminRole } from '../roles.js';
import { templateVariables } from '../linkifiers/url-template.js';
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

const MAX_NAME_LENGTH = 100;
const MAX_LANGUAGE_LENGTH = 40;

function invalid(field: string, message: string): ApiError {
  return new ApiError('BAD_REQUEST', 400, message, { errors: { [field]: [message] } });
}

export function validatePlayground(name: string, language: string, urlTemplate: string): void {
  if (name.trim() === '') throw invalid('name', 'This field cannot be blank.');
  if (name.length > MAX_NAME_LENGTH) throw invalid('name', `Ensure this value has at most ${MAX_NAME_LENGTH} characters (it has ${name.length}).`);
  if (language.trim() === '') throw invalid('pygments_language', 'This field cannot be blank.');
  if (language.length > MAX_LANGUAGE_LENGTH) {
    throw invalid('pygments_language', `Ensure this value has at most ${MAX_LANGUAGE_LENGTH} characters (it has ${language.length}).`);
  }
  if (!/^[ a-zA-Z0-9_+\-./#]*$/.test(language)) throw invalid('pygments_language', 'Invalid characters in pygments language');
  const variables = templateVariables(urlTemplate);
  if (variables === null || urlTemplate.trim() === '') throw invalid('url_template', 'Invalid URL template.');
  if (variables.length !== 1 || variables[0] !== 'code') {
    throw invalid('url_template', '"code" should be the only variable present in the URL template');
  }
}

/** Pure: a command on a realm's code playgrounds gives the events to record, or a catalog error. */
export function decidePlaygrounds(command: PlaygroundCommand, state: PlaygroundsState): PlaygroundEvent[] {
  if (!isAdminRole(command.actor.role)) throw errors.mustBeAdmin();
  const realm_id = state.realm_id;
  switch (command.type) {
    case 'AddPlayground': {
      validatePlayground(command.name, command.pygments_language, command.url_template);
      if (state.playgrounds.some((p) => p.name === command.name && p.pygments_language === command.pygments_language)) {
        throw invalid('__all__', 'Realm playground with this Realm, Pygments language and Name already exists.');
      }
      const { playground_id, name, pygments_language, url_template } = command;
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
