import t from 'tap';
import { compileSchema, compileSchemaUncached, openapi, toJsonSchema } from '../helpers/openapi.js';

// test/helpers/openapi.ts keeps ajv's generated validators on disk for later test processes: a validator loaded
// from there must judge responses exactly as the one ajv compiles.
const registerSchema = toJsonSchema(openapi.paths['/register'].post.responses['200'].content['application/json'].schema);

const samples: Array<[string, unknown]> = [
  ['the smallest documented answer', { result: 'success', msg: '', queue_id: 'q', last_event_id: -1, zulip_version: '9.0', zulip_feature_level: 247, zulip_merge_base: '9.0' }],
  ['a queue id of the wrong type', { result: 'success', msg: '', queue_id: 5, last_event_id: -1 }],
  ['a setting of the wrong type', { result: 'success', msg: '', queue_id: 'q', last_event_id: -1, realm_name: 7, realm_users: [{ user_id: 'x' }] }],
  ['not an object', 'success'],
];

t.test('a validator loaded from the cache agrees with a freshly compiled one, errors included', async (t) => {
  compileSchema(registerSchema); // writes the cache when it is not there yet
  const cached = compileSchema(registerSchema);
  const fresh = compileSchemaUncached(registerSchema);
  t.not(cached, fresh);
  let rejected = 0;
  for (const [name, sample] of samples) {
    const verdict = cached(sample);
    t.equal(verdict, fresh(sample), `${name}: same verdict`);
    t.same(cached.errors ?? null, fresh.errors ?? null, `${name}: same errors`);
    if (!verdict) rejected += 1;
  }
  t.equal(rejected, 3, 'the three wrong answers are refused');
});
