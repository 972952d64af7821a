// Global times: `<time:…>` shows a moment in each reader's own time zone.
import type { MdNode } from './tree.js';
import { element, text } from './tree.js';

const latestYear = 9999;

/** Parses Zulip's accepted forms: UNIX seconds, ISO 8601, and English dates like "Jun 5th 2017, 10:30PM" (UTC unless said). */
export function parseGlobalTime(input: string): Date | undefined {
  const value = input.trim();
  if (value === '') return undefined;
  let date: Date;
  if (/^-?\d+(?:\.\d+)?$/.test(value)) {
    date = new Date(Number(value) * 1000);
  } else {
    if (!/\d/.test(value) || /[<>*]/.test(value)) return undefined;
    let normalized = value.replace(/(\d)(st|nd|rd|th)\b/gi, '$1').replace(/(\d)\s*([ap]m)\b/gi, '$1 $2');
    const hasZone = /(?:Z|[+-]\d{2}:?\d{2}|\b(?:UTC|GMT))$/i.test(normalized);
    if (!hasZone) normalized = /^\d{4}-\d{2}-\d{2}T/.test(normalized) ? `${normalized}Z` : `${normalized} UTC`;
    date = new Date(normalized);
  }
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 0 || year > latestYear) return undefined;
  return date;
}

export function renderGlobalTime(atom: string): MdNode[] {
  const body = atom.slice('<time:'.length, -1);
  const date = parseGlobalTime(body);
  if (!date) return [element('span', { className: ['timestamp-error'] }, [text(`Invalid time format: ${body}`)])];
  const datetime = date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [element('time', { dateTime: datetime }, [text(body)])];
}
