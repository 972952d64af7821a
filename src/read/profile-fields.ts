import type { Db } from '../db/database.js';

/**
 * The organization's custom profile fields in their API form (GET /realm/profile_fields and
 * /register's custom_profile_fields).
 */
export async function listProfileFields(db: Db, realmId: number) {
  const fields = await db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).orderBy('order').execute();
  return fields.map((f) => ({
    id: f.id,
    type: f.type,
    order: f.order,
    name: f.name,
    hint: f.hint,
    field_data: f.field_data,
    display_in_profile_summary: f.display_in_profile_summary,
    required: f.required,
  }));
}
