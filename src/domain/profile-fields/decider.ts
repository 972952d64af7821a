import { errors } from '../errors.js';
import type { CustomProfileFieldsReordered, ProfileFieldEntry } from './events.js';

/**
 * Pure: each field's new order is its position in `order` (from 0, the last one if listed twice),
 * as on the real server; every field of the realm must be listed, and ids of no field are ignored.
 */
export function decideReorderProfileFields(realmId: number, order: readonly number[], fields: readonly ProfileFieldEntry[]): CustomProfileFieldsReordered[] {
  const position = new Map<number, number>();
  order.forEach((id, i) => position.set(id, i));
  if (fields.some((f) => !position.has(f.id))) throw errors.badRequest('Invalid order mapping.');
  const reordered = fields.map((f) => ({ ...f, order: position.get(f.id)! })).sort((a, b) => a.order - b.order || a.id - b.id);
  return [{ type: 'CustomProfileFieldsReordered', data: { realm_id: realmId, fields: reordered } }];
}
