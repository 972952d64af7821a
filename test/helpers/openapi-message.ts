import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { Ajv, type ValidateFunction } from 'ajv';

/** Validators compiled from the real server's OpenAPI document (GET /messages items, GET /messages/{id}). */
const doc = stripUntypedNullable(parse(readFileSync(new URL('../../../shared/reference/zulip-openapi.yaml', import.meta.url), 'utf8'))) as Record<string, any>;

// OpenAPI 3.0 overlays say `nullable: true` without a type (the type is in an allOf sibling); ajv
// refuses that, and the sibling already carries it.
function stripUntypedNullable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripUntypedNullable);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'nullable' && !('type' in value)) continue;
    out[k] = stripUntypedNullable(v);
  }
  return out;
}
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema({ ...doc, $id: 'openapi' }, 'openapi');

function successSchema(path: string, method: string): Record<string, any> {
  const schema = doc.paths[path][method].responses['200'].content['application/json'].schema;
  return schema.allOf.find((s: Record<string, any>) => s.properties && (s.properties.messages || s.properties.message));
}

const rewrite = (schema: unknown): unknown =>
  JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/'));

export const validateListedMessage: ValidateFunction = ajv.compile(rewrite(successSchema('/messages', 'get').properties.messages.items) as object);
export const validateSingleMessage: ValidateFunction = ajv.compile(rewrite(successSchema('/messages/{message_id}', 'get').properties.message) as object);
