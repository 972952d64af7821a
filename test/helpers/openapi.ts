import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { findReference, repoRoot } from './repo-root.js';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { writeWhole } from '../../src/db/memory-template.js';

/**
 * The real server's OpenAPI document (feature level 247) as JSON Schema that ajv compiles, and a
 * lookup from an API request (method + URL) to the documented operation and its response schemas.
 */
export const OPENAPI_PATH = findReference('zulip-openapi.yaml');

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * OpenAPI 3.0 to JSON Schema: `nullable: true` becomes a null alternative (beside a `type` it
 * widens the type; without one, as in an allOf overlay, it wraps the schema), and `oneOf` becomes
 * `anyOf`: the document's alternatives overlap (an integer id or a group object, two error shapes
 * with the same fields), which oneOf would reject exactly when the value is valid.
 */
export function toJsonSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toJsonSchema);
  if (!value || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) {
    if (k === 'nullable' || k === 'example' || k === 'examples') continue;
    out[k === 'oneOf' ? 'anyOf' : k] = k === 'properties' ? mapValues(v as Record<string, unknown>) : toJsonSchema(v);
  }
  if (source.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [{ type: 'null' }, out] };
}

// Property names are data, not keywords: a property called `example` or `nullable` must survive.
function mapValues(properties: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, toJsonSchema(schema)]));
}

// /register's top-level copies of the settings (clients without user_settings_object) stopped
// growing at feature level 89: later settings exist only in user_settings.
const LEGACY_TOP_LEVEL = 'queue_id';

/**
 * Fields our specification adds to the document: those of feature levels 248 to the level this
 * server claims (SPEC.md's versioning table; realm_url from the real server's changelog at 257, when
 * it replaced realm_uri), and fields SPEC.md names where the document differs (SPEC.md wins). Every
 * object the document describes with the neighbouring fields gains them.
 */
const SPEC_FIELDS: Array<{ source: string; besides: string[]; add: Record<string, object>; notIn?: string }> = [
  { source: 'level 253', besides: ['web_home_view', 'dense_mode'], notIn: LEGACY_TOP_LEVEL, add: { receives_typing_notifications: { type: 'boolean' } } },
  { source: 'level 254', besides: ['stream_id', 'history_public_to_subscribers'], add: { creator_id: { type: 'integer', nullable: true } } },
  { source: 'level 257', besides: ['realm_uri', 'realm_name'], add: { realm_url: { type: 'string' } } },
  { source: 'level 268', besides: ['web_home_view', 'dense_mode'], notIn: LEGACY_TOP_LEVEL, add: { web_navigate_to_sent_message: { type: 'boolean' } } },
  { source: 'level 269', besides: ['web_home_view', 'dense_mode'], notIn: LEGACY_TOP_LEVEL, add: { web_channel_default_view: { type: 'integer' } } },
  {
    source: 'level 275',
    besides: ['web_home_view', 'dense_mode'],
    notIn: LEGACY_TOP_LEVEL,
    add: { web_animate_image_previews: { type: 'string', enum: ['always', 'on_hover', 'never'] } },
  },
  // SPEC.md's code playground calls the language highlighter_language; the server sends both names.
  { source: 'SPEC.md playgrounds', besides: ['pygments_language', 'url_template'], add: { highlighter_language: { type: 'string' } } },
];

function addSpecFields(value: unknown): void {
  if (!value || typeof value !== 'object') return;
  if (Array.isArray(value)) return value.forEach(addSpecFields);
  const node = value as Record<string, any>;
  const properties = node.properties as Record<string, unknown> | undefined;
  if (properties && typeof properties === 'object') {
    for (const { besides, add, notIn } of SPEC_FIELDS) {
      if (notIn !== undefined && notIn in properties) continue;
      if (besides.every((name) => name in properties)) Object.assign(properties, add);
    }
  }
  Object.values(node).forEach(addSpecFields);
}

export const openapi = await parsedOnce(OPENAPI_PATH);

/**
 * Parsing the 1 MB YAML document takes most of a second, in every test process: the parsed form is
 * kept as JSON in the temporary directory, named by a digest of the YAML text.
 */
async function parsedOnce(path: string): Promise<Record<string, any>> {
  const text = readFileSync(path, 'utf8');
  const cached = join(tmpdir(), `zulip-es-openapi-${createHash('sha256').update(text).digest('hex').slice(0, 24)}.json`);
  try {
    return JSON.parse(readFileSync(cached, 'utf8')) as Record<string, any>;
  } catch {
    const { parse } = await import('yaml');
    const parsed = parse(text) as Record<string, any>;
    writeWhole(cached, JSON.stringify(parsed));
    return parsed;
  }
}
addSpecFields(openapi);
const converted = toJsonSchema(openapi) as Record<string, any>;

// code.source keeps each validator's generated code, for the cache below.
const ajvOptions = { strict: false, allErrors: true, validateFormats: false, code: { source: true } };
const ajv = new Ajv(ajvOptions);
ajv.addSchema({ components: converted.components, $id: 'openapi' });

const rewriteRefs = (schema: unknown): string => JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/');

const requireForValidators = createRequire(import.meta.url);
/** What every compiled validator depends on besides its own schema: ajv, its options and the documented components. */
const validatorsDigest = createHash('sha256')
  .update(readFileSync(requireForValidators.resolve('ajv/package.json')))
  .update(JSON.stringify(ajvOptions))
  .update(JSON.stringify(converted.components))
  .digest('hex');
const validatorCache = join(repoRoot, 'node_modules', '.cache', 'zulip-es-validators');
const standaloneCode = requireForValidators('ajv/dist/standalone') as typeof import('ajv/dist/standalone/index.js').default;

/** ajv's compile, without the cache (to check the cache against). */
export const compileSchemaUncached = (schema: unknown): ValidateFunction => ajv.compile(JSON.parse(rewriteRefs(schema)) as object);

/**
 * ajv's compile of a large response schema takes up to a second (GET /events: every event type), in every test
 * process that checks one: the generated code (ajv's standalone module) is kept in node_modules/.cache (the
 * checkout's own, not a shared temporary directory, since it is run), named by a digest of the schema and of
 * what it depends on, and later processes load it.
 */
export function compileSchema(schema: unknown): ValidateFunction {
  const rewritten = rewriteRefs(schema);
  const key = createHash('sha256').update(validatorsDigest).update(rewritten).digest('hex').slice(0, 24);
  const cached = join(validatorCache, `${key}.cjs`);
  let source: string;
  try {
    source = readFileSync(cached, 'utf8');
  } catch {
    const validate = ajv.compile(JSON.parse(rewritten) as object);
    mkdirSync(validatorCache, { recursive: true });
    writeWhole(cached, standaloneCode(ajv, validate));
    return validate;
  }
  const module = { exports: {} as { default?: ValidateFunction } };
  new Function('require', 'module', 'exports', source)(requireForValidators, module, module.exports);
  return module.exports.default!;
}

export interface Operation {
  method: string;
  /** The documented path, e.g. `/users/{user_id}`. */
  path: string;
  pattern: RegExp;
  params: number;
}

// A path parameter named like an id is a number, `email` an address, anything else one segment;
// that tells /users/{user_id} from /users/{email} and from the literal /users/me.
function segmentPattern(name: string): string {
  if (name === 'email') return '[^/]*@[^/]*';
  if (name.endsWith('_id')) return '\\d+';
  if (name === 'filename') return '.+';
  return '[^/]+';
}

export const operations: Operation[] = Object.entries(openapi.paths as Record<string, Record<string, unknown>>)
  .flatMap(([path, item]) =>
    METHODS.filter((m) => m in item).map((method) => {
      const names: string[] = [];
      const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}/g, (_, name: string) => {
        names.push(name);
        return `(${segmentPattern(name)})`;
      });
      return { method: method.toUpperCase(), path, pattern: new RegExp(`^${source}$`), params: names.length };
    }),
  )
  // Literal paths first: /users/me/subscriptions before /users/{user_id}/...
  .sort((a, b) => a.params - b.params);

/** The documented operation a request hits (URL relative to /api/v1, query string allowed). */
export function operationFor(method: string, url: string): Operation | undefined {
  const path = decodeURI(url.split('?')[0]!);
  return operations.find((op) => op.method === method.toUpperCase() && op.pattern.test(path));
}

const responseValidators = new Map<string, ValidateFunction | null>();

/** The documented schema of a status of an operation, falling back to the class (2XX, 4XX) and `default`. */
export function responseValidator(op: Operation, status: number): ValidateFunction | null {
  const key = `${op.method} ${op.path} ${status}`;
  if (responseValidators.has(key)) return responseValidators.get(key)!;
  const responses = openapi.paths[op.path][op.method.toLowerCase()].responses as Record<string, any>;
  const documented = responses[String(status)] ?? responses[`${String(status)[0]}XX`];
  const schema = resolveResponse(documented)?.content?.['application/json']?.schema;
  const validator = schema ? compileSchema(toJsonSchema(schema)) : null;
  responseValidators.set(key, validator);
  return validator;
}

function resolveResponse(response: any): any {
  if (!response?.$ref) return response;
  const name = String(response.$ref).split('/').pop()!;
  return openapi.components.responses[name];
}

/** Every error, documented for that status or not, is the coded error envelope. */
export const validateErrorEnvelope = compileSchema({ $ref: '#/components/schemas/CodedErrorBase' });

export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => `${e.instancePath || '/'} ${e.message}${e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : ''}`)
    .join('; ');
}

type Branch = { types: unknown[]; ops: unknown[] | null; schema: unknown; validate?: ValidateFunction };
let eventBranches: Branch[] | undefined;

function enumOf(schema: any): unknown[] | null {
  if (!schema || typeof schema !== 'object') return null;
  if (Array.isArray(schema.enum)) return schema.enum;
  for (const part of schema.allOf ?? []) {
    const found = enumOf(part);
    if (found) return found;
  }
  return null;
}

/**
 * The documented schemas a client event may match, by its type and op: GET /events lists every
 * event as one alternative, and checking an event against all of them reports every other event's
 * rules as errors; checking it against its own says what is wrong with it.
 */
export function eventSchemasFor(event: { type?: unknown; op?: unknown }): ValidateFunction[] {
  eventBranches ??= (openapi.paths['/events'].get.responses['200'].content['application/json'].schema.allOf[1].properties.events.items.oneOf as any[]).map(
    (branch) => {
      const properties = branch.properties ?? Object.assign({}, ...(branch.allOf ?? []).map((p: any) => p.properties ?? {}));
      return { types: enumOf(properties.type) ?? [], ops: enumOf(properties.op), schema: branch };
    },
  );
  return eventBranches
    .filter((b) => b.types.includes(event.type) && (b.ops === null ? !('op' in event) || event.op === undefined : b.ops.includes(event.op)))
    .map((b) => (b.validate ??= compileSchema(toJsonSchema(b.schema))));
}
