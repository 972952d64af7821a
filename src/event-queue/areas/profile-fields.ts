import type { DomainEvent } from '../../domain/events.js';
import type { ProfileFieldEntry } from '../../domain/profile-fields/events.js';
import type { Db } from '../../db/database.js';
import type { StoredEvent } from '../../eventstore/types.js';
import { upcast } from '../../eventstore/upcast.js';
import { registerTranslator } from '../translators.js';
import type { Translator } from '../types.js';

const FIELD_EVENT_TYPES = ['CustomProfileFieldCreated', 'CustomProfileFieldUpdated', 'CustomProfileFieldDeleted', 'CustomProfileFieldsReordered'] as const;

/** Folds one field event into the realm's list of fields. */
export function evolveProfileFields(fields: ProfileFieldEntry[], event: DomainEvent): ProfileFieldEntry[] {
  switch (event.type) {
    case 'CustomProfileFieldCreated': {
      const { field_id: id, realm_id: _realm, ...rest } = event.data;
      return [...fields.filter((f) => f.id !== id), { id, ...rest }];
    }
    case 'CustomProfileFieldUpdated': {
      const { field_id: id, realm_id: _realm, ...rest } = event.data;
      return fields.map((f) => (f.id === id ? { ...f, ...rest } : f));
    }
    case 'CustomProfileFieldDeleted':
      return fields.filter((f) => f.id !== event.data.field_id);
    case 'CustomProfileFieldsReordered': {
      const order = new Map(event.data.fields.map((f) => [f.id, f.order]));
      return fields.map((f) => ({ ...f, order: order.get(f.id) ?? f.order }));
    }
    default:
      return fields;
  }
}

/**
 * The realm's fields as of `event`: the fields live on one stream each, so this folds every field
 * event of the log up to it (a handful per organization), however late a queue reads it.
 */
async function fieldsAsOf(db: Db, event: StoredEvent, realmId: number): Promise<ProfileFieldEntry[]> {
  const history = await db
    .selectFrom('events')
    .selectAll()
    .where('type', 'in', FIELD_EVENT_TYPES)
    .where('position', '<=', event.position)
    .orderBy('position')
    .execute();
  let fields: ProfileFieldEntry[] = [];
  for (const row of history) {
    const past = upcast(row as unknown as StoredEvent) as unknown as DomainEvent;
    if ((past.data as { realm_id?: number }).realm_id === realmId) fields = evolveProfileFields(fields, past);
  }
  return fields;
}

// The real server sends every field of the realm after any change to them, in register's form
// (src/read/profile-fields.ts).
const fullList: Translator = async (event, db) => {
  const realmId = (event.data as { realm_id: number }).realm_id;
  const fields = [...await fieldsAsOf(db, event, realmId)]
    .sort((a, b) => a.order - b.order || a.id - b.id)
    .map((f) => ({ ...f, required: f.required ?? false }));
  return { audience: 'realm', forUser: (r) => (r.realm.id === realmId ? [{ type: 'custom_profile_fields', fields }] : []) };
};

for (const type of FIELD_EVENT_TYPES) registerTranslator(type, fullList);
