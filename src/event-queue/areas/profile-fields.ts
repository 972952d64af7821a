import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';

// The real server sends every field of the realm after any change to them, in register's form
// (src/read/profile-fields.ts: no field can be made required here).
registerTranslator('CustomProfileFieldsReordered', async (event) => {
  const d = event.data as DataOf<'CustomProfileFieldsReordered'>;
  return { audience: 'realm', forUser: () => [{ type: 'custom_profile_fields', fields: d.fields.map((f) => ({ ...f, required: false })) }] };
});
