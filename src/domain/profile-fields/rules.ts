import { errors } from '../errors.js';

/** The custom profile field types of the API. */
export const FieldType = {
  SHORT_TEXT: 1, LONG_TEXT: 2, SELECT: 3, DATE: 4, URL: 5, USER: 6, EXTERNAL_ACCOUNT: 7, PRONOUNS: 8,
} as const;
const KNOWN_TYPES: ReadonlySet<number> = new Set(Object.values(FieldType));

export const MAX_FIELD_NAME_LENGTH = 40;
export const MAX_FIELD_HINT_LENGTH = 80;
/** The real server shows at most this many fields in the user card's profile summary. */
export const MAX_SUMMARY_FIELDS = 2;

/** External-account services a field may name by subtype alone: the label and link come from here. */
export const DEFAULT_EXTERNAL_ACCOUNTS: Readonly<Record<string, { name: string; hint: string; url_pattern: string }>> = {
  twitter: { name: 'Twitter username', hint: '', url_pattern: 'https://twitter.com/%(username)s' },
  github: { name: 'GitHub username', hint: '', url_pattern: 'https://github.com/%(username)s' },
};

export type FieldData = Record<string, unknown>;

const bad = (msg: string) => errors.badRequest(msg);
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** field_data as the request layer takes it: an object whose values are strings or objects of strings. */
export function checkFieldDataShape(data: unknown): FieldData {
  if (!isPlainObject(data)) throw bad('field_data is not a dict');
  for (const value of Object.values(data)) {
    const allowed = typeof value === 'string' || (isPlainObject(value) && Object.values(value).every((v) => typeof v === 'string'));
    if (!allowed) throw bad('field_data contains a value that is not an allowed_type');
  }
  return data;
}

/** Checks `value` holds exactly the listed keys, each a non-blank string (the real server's order of errors). */
function checkOnlyKeys(varName: string, value: unknown, required: readonly string[]): Record<string, string> {
  if (!isPlainObject(value)) throw bad(`${varName} is not a dict`);
  for (const key of required) {
    if (!(key in value)) throw bad(`${key} key is missing from ${varName}`);
    if (typeof value[key] !== 'string') throw bad(`${varName}["${key}"] is not a string`);
    if ((value[key] as string).trim() === '') throw bad(`${varName}["${key}"] cannot be blank.`);
  }
  const extra = Object.keys(value).filter((k) => !required.includes(k));
  if (extra.length > 0) throw bad(`Unexpected arguments: ${extra.join(', ')}`);
  return value as Record<string, string>;
}

function checkSelectData(data: FieldData): void {
  if (Object.keys(data).length < 1) throw bad('Field must have at least one choice.');
  const texts = new Set<string>();
  for (const [key, option] of Object.entries(data)) {
    if (key.trim() === '') throw bad("'value' cannot be blank.");
    texts.add(checkOnlyKeys('field_data', option, ['text', 'order']).text!);
  }
  if (texts.size < Object.keys(data).length) throw bad('Field must not have duplicate choices.');
}

function checkExternalAccountData(data: FieldData): void {
  if (!('subtype' in data)) throw bad('subtype key is missing from field_data');
  if (typeof data.subtype !== 'string') throw bad('field_data["subtype"] is not a string');
  if (data.subtype.trim() === '') throw bad('field_data["subtype"] cannot be blank.');
  if ('url_pattern' in data) {
    const pattern = data.url_pattern;
    if (typeof pattern !== 'string') throw bad('field_data["url_pattern"] is not a string');
    if (pattern.split('%(username)s').length !== 2) throw bad("URL pattern must contain '%(username)s'.");
    if (!isUrl(pattern.replace('%(username)s', 'username'))) throw bad('field_data["url_pattern"] is not a URL');
  }
  const extra = Object.keys(data).filter((k) => k !== 'subtype' && k !== 'url_pattern');
  if (extra.length > 0) throw bad(`Unexpected arguments: ${extra.join(', ')}`);
  if (data.subtype in DEFAULT_EXTERNAL_ACCOUNTS) return;
  if (data.subtype !== 'custom') throw bad('Invalid external account type');
  if (!('url_pattern' in data)) throw bad('Custom external account must define URL pattern');
}

/** Whether a field is one of the known external-account services (its label and hint are not its own). */
export const isDefaultExternalField = (type: number, data: FieldData): boolean =>
  type === FieldType.EXTERNAL_ACCOUNT && data.subtype !== 'custom';

/** A field definition as the real server checks it on creation and, with the merged values, on update. */
export function checkFieldDefinition(field: { name: string; hint: string; type: number; field_data: FieldData; display_in_profile_summary: boolean }): void {
  if (field.type === FieldType.SELECT) checkSelectData(field.field_data);
  else if (field.type === FieldType.EXTERNAL_ACCOUNT) checkExternalAccountData(field.field_data);
  if (!isDefaultExternalField(field.type, field.field_data)) {
    if (field.name.trim() === '') throw bad('Label cannot be blank.');
    if (field.hint.length > MAX_FIELD_HINT_LENGTH) throw bad(`hint is too long (limit: ${MAX_FIELD_HINT_LENGTH} characters)`);
    if (field.name.length > MAX_FIELD_NAME_LENGTH) throw bad(`name is too long (limit: ${MAX_FIELD_NAME_LENGTH} characters)`);
  }
  if (!KNOWN_TYPES.has(field.type)) throw bad('Invalid field type.');
  // Long text does not fit the summary; user fields would need more from clients.
  if (field.display_in_profile_summary && (field.type === FieldType.LONG_TEXT || field.type === FieldType.USER)) {
    throw bad('Field type not supported for display in profile summary.');
  }
}

/** Only select and external-account fields keep field_data; the others store ''. */
export const storesFieldData = (type: number) => type === FieldType.SELECT || type === FieldType.EXTERNAL_ACCOUNT;

/** http(s)/ftp(s) with a host name that has a dot, or localhost, or an IP address; no spaces. */
export function isUrl(text: string): boolean {
  if (/\s/.test(text)) return false;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (!['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol)) return false;
  const host = url.hostname;
  return host === 'localhost' || /^\[.*\]$/.test(host) || /^\d+\.\d+\.\d+\.\d+$/.test(host) || /^[^.]+(\.[^.]+)*\.[a-z\u00a1-\uffff-]{2,}\.?$/i.test(host);
}

function isDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return year >= 1 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export interface ValueField {
  name: string;
  type: number;
  field_data: string;
}

/** What a user-type field may name: an active human of the realm. */
export type UserLookup = (id: number) => { is_active: boolean; is_bot: boolean } | undefined;

/** A user's value for a field, checked by the field's type (errors name the field); the text to store. */
export function checkFieldValue(field: ValueField, value: unknown, lookupUser: UserLookup): string {
  const varName = field.name;
  const text = (limit?: number): string => {
    if (typeof value !== 'string') throw bad(`${varName} is not a string`);
    if (limit !== undefined && value.length > limit) throw bad(`${varName} is too long (limit: ${limit} characters)`);
    return value;
  };
  switch (field.type) {
    case FieldType.SHORT_TEXT:
    case FieldType.EXTERNAL_ACCOUNT:
    case FieldType.PRONOUNS:
      return text(50);
    case FieldType.LONG_TEXT:
      return text(500);
    case FieldType.DATE: {
      const s = text();
      if (!isDate(s)) throw bad(`${varName} is not a date`);
      return s;
    }
    case FieldType.URL: {
      const s = text();
      if (!isUrl(s)) throw bad(`${varName} is not a URL`);
      return s;
    }
    case FieldType.SELECT: {
      const s = text();
      const choices = field.field_data === '' ? {} : (JSON.parse(field.field_data) as Record<string, unknown>);
      if (!Object.hasOwn(choices, s)) throw bad(`'${s}' is not a valid choice for '${varName}'.`);
      return s;
    }
    case FieldType.USER: {
      if (!Array.isArray(value)) throw bad('User IDs is not a list');
      for (const [i, id] of value.entries()) if (!Number.isInteger(id)) throw bad(`User IDs[${i}] is not an integer`);
      for (const id of value as number[]) {
        const found = lookupUser(id);
        if (!found) throw bad(`Invalid user ID: ${id}`);
        if (!found.is_active) throw bad(`User with ID ${id} is deactivated`);
        if (found.is_bot) throw bad(`User with ID ${id} is a bot`);
      }
      return JSON.stringify(value);
    }
    default:
      return text();
  }
}

/** Short and long text values are Markdown; the others have no rendered form. */
export const isRenderedType = (type: number) => type === FieldType.SHORT_TEXT || type === FieldType.LONG_TEXT;
