import { Eta } from 'eta';
import { shippedPath } from '../source-root.js';
import { Role } from '../domain/roles.js';
import type { AuditEntry } from '../read/audit.js';
import { CHANNEL_FIELDS, MESSAGE_FIELDS, USER_FIELDS, type ChartBucket } from './queries.js';

/**
 * Eta escapes every `<%= %>` by default; the templates use the raw `<%~ %>` only for the layout's
 * body, which is itself the output of an escaping template.
 */
export const views = new Eta({
  views: shippedPath('src/audit-console/templates'),
  autoEscape: true,
  cache: true,
});

export interface Names {
  users: Map<number, string>;
  channels: Map<number, string>;
}

/** One data field as the log shows it: a link to a user, a channel or messages, or plain text. */
export type DataField =
  | { key: string; kind: 'user' | 'channel'; id: number; label: string }
  | { key: string; kind: 'messages'; ids: number[] }
  | { key: string; kind: 'text'; text: string; long: boolean };

const MAX_TEXT = 2_000;

function plain(key: string, value: unknown): DataField {
  let text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  if (text.length > MAX_TEXT) text = `${text.slice(0, MAX_TEXT)}… (${text.length} characters)`;
  return { key, kind: 'text', text, long: text.length > 80 || text.includes('\n') };
}

/** HTML renderings of a content shown beside it: the export keeps them, the page shows the text. */
const RENDERINGS = new Set(['rendered_content', 'prev_rendered_content', 'rendered_description', 'rendered_value']);

/** The fields of an event's data; null ones (an edit's "unchanged") and HTML renderings are left out. */
export function dataFields(entry: AuditEntry, names: Names): DataField[] {
  return Object.entries(entry.data).filter(([key, value]) => value !== null && !RENDERINGS.has(key)).map(([key, value]): DataField => {
    const isId = typeof value === 'number' && Number.isSafeInteger(value);
    if (isId && USER_FIELDS.has(key)) return { key, kind: 'user', id: value, label: names.users.get(value) ?? `user ${value}` };
    if (isId && CHANNEL_FIELDS.has(key)) return { key, kind: 'channel', id: value, label: names.channels.get(value) ?? `channel ${value}` };
    if (MESSAGE_FIELDS.has(key)) {
      const ids = (Array.isArray(value) ? value : [value]).filter((v): v is number => typeof v === 'number' && Number.isSafeInteger(v));
      if (ids.length > 0) return { key, kind: 'messages', ids: ids.slice(0, 50) };
    }
    return plain(key, value);
  });
}

const ROLE_NAMES = new Map<number, string>([
  [Role.OWNER, 'owner'],
  [Role.ADMINISTRATOR, 'administrator'],
  [Role.MODERATOR, 'moderator'],
  [Role.MEMBER, 'member'],
  [Role.GUEST, 'guest'],
]);
export const roleName = (role: number): string => ROLE_NAMES.get(role) ?? `role ${role}`;

/** "2026-11-26 12:00:03 UTC" */
export function shortTime(iso: unknown): string {
  if (typeof iso !== 'string' && typeof iso !== 'number') return '';
  const date = typeof iso === 'number' ? new Date(iso * 1000) : new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export interface ChartBar {
  x: number;
  y: number;
  width: number;
  height: number;
  label: string;
}

/** Bars of the events-per-period chart, laid out in SVG units (the template only draws them). */
export function chartBars(buckets: readonly ChartBucket[], unit: 'hour' | 'day', width: number, height: number): { bars: ChartBar[]; max: number } {
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const slot = buckets.length === 0 ? width : width / buckets.length;
  const bars = buckets.map((b, i) => {
    const h = Math.max(1, Math.round((b.count / max) * height));
    const when = unit === 'day' ? b.start.slice(0, 10) : `${b.start.slice(0, 13).replace('T', ' ')}:00`;
    return { x: i * slot + slot * 0.1, y: height - h, width: Math.max(0.5, slot * 0.8), height: h, label: `${when} UTC: ${b.count} events` };
  });
  return { bars, max };
}
