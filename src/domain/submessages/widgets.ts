/**
 * Widgets (polls, to-do lists, bots' zforms) as the real server makes and checks them: a message
 * whose first word is /poll or /todo gets a `widget` submessage parsed from its content; a message
 * sent with `widget_content` gets that one (only zforms pass its check); later submessages are checked
 * by the message's widget type.
 */

export class WidgetError extends Error {}

export interface Widget {
  widget_type: string;
  extra_data: unknown;
}

const WIDGET_TYPES = ['poll', 'todo'];

// A list marker ("- " or "* ") before an option or a task is dropped, as the real server does.
const stripListMarker = (line: string) => line.trim().replace(/^\s*[-*]?\s*/, '');

function parsePoll(rest: string): { question: string; options: string[] } {
  const lines = rest.split(/\r\n|\r|\n/);
  let question = '';
  if (lines.length > 0 && lines[0]) question = lines.shift()!.trim();
  const options = lines.map(stripListMarker).filter((option) => option.length > 0);
  return { question, options };
}

function parseTodo(rest: string): { task_list_title: string; tasks: Array<{ task: string; desc: string }> } {
  const lines = rest.split(/\r\n|\r|\n/);
  let title = '';
  if (lines.length > 0 && lines[0]) title = lines.shift()!.trim();
  const tasks = lines
    .map(stripListMarker)
    .filter((task) => task.length > 0)
    .map((task) => {
      // A task and its description are separated by the first ": " ("10:30 standup" is one task).
      const colon = task.indexOf(': ');
      return colon < 0 ? { task: task.trim(), desc: '' } : { task: task.slice(0, colon).trim(), desc: task.slice(colon + 2).trim() };
    });
  return { task_list_title: title, tasks };
}

/** The widget a message's content asks for, or null. */
export function widgetFromContent(content: string): Widget | null {
  const first = content.split(/\s+/)[0] ?? '';
  if (!first.startsWith('/')) return null;
  const type = first.slice(1);
  if (!WIDGET_TYPES.includes(type)) return null;
  const rest = content.replace(first, '');
  return { widget_type: type, extra_data: type === 'poll' ? parsePoll(rest) : parseTodo(rest) };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `widget_content` of POST /messages: JSON text naming a zform, checked as the real server does. */
export function checkWidgetContent(raw: string): Widget {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new WidgetError('Widgets: API programmer sent invalid JSON content');
  }
  const fail = (why: string) => new WidgetError(`Widgets: ${why}`);
  if (!isObject(value)) throw fail('widget_content is not a dict');
  if (!('widget_type' in value)) throw fail('widget_type is not in widget_content');
  if (!('extra_data' in value)) throw fail('extra_data is not in widget_content');
  const { widget_type, extra_data } = value;
  if (!isObject(extra_data)) throw fail('extra_data is not a dict');
  if (widget_type !== 'zform') throw fail(`unknown widget type: ${String(widget_type)}`);
  if (!('type' in extra_data)) throw fail('zform is missing type field');
  if (extra_data.type !== 'choices') throw fail('unknown zform type: ' + String(extra_data.type));
  try {
    dictWith('extra_data', extra_data, [['type', str], ['heading', str], ['choices', listOf(dictOf([['short_name', str], ['long_name', str], ['reply', str]]))]]);
  } catch (error) {
    throw error instanceof WidgetError ? fail(error.message) : error;
  }
  return { widget_type, extra_data };
}

// The real server's validators and their wording (check_dict, check_dict_only, check_string, ...).
type Check = (name: string, value: unknown) => void;
const str: Check = (name, v) => {
  if (typeof v !== 'string') throw new WidgetError(`${name} is not a string`);
};
const int: Check = (name, v) => {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new WidgetError(`${name} is not an integer`);
};
const bool: Check = (name, v) => {
  if (typeof v !== 'boolean') throw new WidgetError(`${name} is not a boolean`);
};
const intIn = (allowed: number[]): Check => (name, v) => {
  int(name, v);
  if (!allowed.includes(v as number)) throw new WidgetError(`Invalid ${name}`);
};

// The real server's MAX_IDX: the highest poll option index or to-do task key a client may send.
const MAX_IDX = 1000;
const intRange = (min: number, max: number): Check => (name, v) => {
  int(name, v);
  if ((v as number) < min) throw new WidgetError(`${name} is too small`);
  if ((v as number) > max) throw new WidgetError(`${name} is too large`);
};

/** check_dict: each field present and valid, in order; other keys allowed. */
function dictWith(name: string, value: Record<string, unknown>, fields: Array<[string, Check]>): void {
  for (const [key, check] of fields) {
    if (!(key in value)) throw new WidgetError(`${key} key is missing from ${name}`);
    check(`${name}["${key}"]`, value[key]);
  }
}

/** check_dict_only: check_dict, and no other key. */
function dictOnly(name: string, value: Record<string, unknown>, fields: Array<[string, Check]>): void {
  dictWith(name, value, fields);
  const extra = Object.keys(value).filter((key) => !fields.some(([k]) => k === key));
  if (extra.length > 0) throw new WidgetError(`Unexpected arguments: ${extra.join(', ')}`);
}

const dictOf = (fields: Array<[string, Check]>): Check => (name, v) => {
  if (!isObject(v)) throw new WidgetError(`${name} is not a dict`);
  dictWith(name, v, fields);
};
const listOf = (item: Check): Check => (name, v) => {
  if (!Array.isArray(v)) throw new WidgetError(`${name} is not a list`);
  v.forEach((element, i) => item(`${name}[${i}]`, element));
};

function typed(name: string, value: unknown): Record<string, unknown> & { type: string } {
  if (!isObject(value)) throw new WidgetError(`${name} is not a dict`);
  if (!('type' in value)) throw new WidgetError(`type key is missing from ${name}`);
  str(`${name}["type"]`, value.type);
  return value as Record<string, unknown> & { type: string };
}

/** A poll's submessage: votes and new options from anyone, the question only from its author. */
export function validatePollData(value: unknown, isWidgetAuthor: boolean): void {
  const data = typed('poll data', value);
  switch (data.type) {
    case 'vote':
      return dictOnly('poll data', data, [['type', str], ['key', str], ['vote', intIn([1, -1])]]);
    case 'question':
      if (!isWidgetAuthor) throw new WidgetError("You can't edit a question unless you are the author.");
      return dictOnly('poll data', data, [['type', str], ['question', str]]);
    case 'new_option':
      return dictOnly('poll data', data, [['type', str], ['option', str], ['idx', intRange(0, MAX_IDX)]]);
    default:
      throw new WidgetError(`Unknown type for poll data: ${data.type}`);
  }
}

/** A to-do list's submessage: new tasks and strikes from anyone, the title only from its author. */
export function validateTodoData(value: unknown, isWidgetAuthor: boolean): void {
  const data = typed('todo data', value);
  switch (data.type) {
    case 'new_task_list_title':
      if (!isWidgetAuthor) throw new WidgetError("You can't edit the task list title unless you are the author.");
      return dictOnly('todo data', data, [['type', str], ['title', str]]);
    case 'new_task':
      return dictOnly('todo data', data, [['type', str], ['key', intRange(0, MAX_IDX)], ['task', str], ['desc', str], ['completed', bool]]);
    case 'strike':
      return dictOnly('todo data', data, [['type', str], ['key', str]]);
    default:
      throw new WidgetError(`Unknown type for todo data: ${data.type}`);
  }
}
