import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ApiError, errors } from '../domain/errors.js';
import { jsonDepthExceeds } from '../eventstore/json-depth.js';

/** The JSON schema subset a route uses to declare one parameter. */
export interface ParamSchema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  enum?: readonly unknown[];
  items?: ParamSchema;
  properties?: Record<string, ParamSchema>;
  required?: readonly string[];
  additionalProperties?: boolean | ParamSchema;
  anyOf?: readonly ParamSchema[];
  oneOf?: readonly ParamSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  propertyNames?: ParamSchema;
  nullable?: boolean;
  default?: unknown;
  /** Accept a bare string for this parameter even though it may also be JSON (e.g. `to`). */
  'x-raw-string-ok'?: boolean;
  /** The route refuses a NUL character in this text itself, with the real server's own message. */
  'x-nul-checked'?: boolean;
}

export interface ParamsSpec {
  properties: Record<string, ParamSchema>;
  required?: readonly string[];
}

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, coerceTypes: false });

export interface CompiledParams {
  spec: ParamsSpec;
  validate: ValidateFunction;
}

let fastifyAjv: Ajv | undefined;

/**
 * A fastify validator compiler (for routes that declare a fastify `schema`) that compiles on the
 * route's first request, like defineRoute's parameters: fastify's own compiler builds every
 * validator before the server may listen, a large share of start-up for routes rarely called.
 */
export function lazyValidatorCompiler({ schema }: { schema: object }): (data: unknown) => boolean {
  let validate: ValidateFunction | undefined;
  const check = Object.assign(
    (data: unknown): boolean => {
      // fastify's own defaults, so a route validates exactly as it did under fastify's compiler.
      fastifyAjv ??= new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: true, addUsedSchema: false, allErrors: false, strict: false });
      validate ??= fastifyAjv.compile(schema);
      const ok = validate(data);
      // fastify reads the errors from the function it was given.
      check.errors = validate.errors;
      return ok;
    },
    { errors: null as ValidateFunction['errors'] },
  );
  return check;
}

export function compileParams(spec: ParamsSpec): CompiledParams {
  const schema = { type: 'object', properties: spec.properties, required: spec.required ?? [], additionalProperties: true };
  return { spec, validate: ajv.compile(schema) };
}

function schemaTypes(schema: ParamSchema): string[] {
  if (schema.type) return [schema.type];
  const alternatives = schema.anyOf ?? schema.oneOf ?? [];
  return alternatives.flatMap(schemaTypes);
}

/**
 * Form fields are strings. A field declared as a number, boolean, array or object is one the real
 * server declares Json[...] (or REQ(json_validator=...)): its text is JSON (`5`, `true`, `"5"`,
 * `[1,2]`), and text that is not JSON is refused as such before any type check. A field that may
 * also be a plain string (`to`) keeps text that is not JSON as that string.
 */
function decodeField(name: string, raw: unknown, schema: ParamSchema): unknown {
  if (typeof raw !== 'string') return raw;
  const types = schemaTypes(schema);
  if (types.length === 0 || (types.length === 1 && types[0] === 'string')) return raw;
  if (types.includes('integer') || types.includes('number')) {
    if (/^-?\d+(\.\d+)?$/.test(raw.trim())) return Number(raw.trim());
  }
  if (types.includes('boolean')) {
    if (raw === 'true' || raw === 'True') return true;
    if (raw === 'false' || raw === 'False') return false;
  }
  try {
    return JSON.parse(raw);
  } catch {
    if (types.includes('string')) return raw;
    throw errors.invalidJson(name);
  }
}

function describeError(error: ErrorObject, spec: ParamsSpec): ApiError {
  const path = error.instancePath.replace(/^\//, '').split('/');
  const name = path[0] || (error.params as { missingProperty?: string }).missingProperty || 'parameter';
  if (error.keyword === 'required' && !error.instancePath) {
    return errors.missingArgument((error.params as { missingProperty: string }).missingProperty);
  }
  const schema = spec.properties[name];
  // As the real server names a place inside a JSON parameter: list[0]["key"].
  const where = name + path.slice(1).map((part) => (/^\d+$/.test(part) ? `[${part}]` : `["${part}"]`)).join('');
  switch (error.keyword) {
    case 'type': {
      const wanted = (error.params as { type: string }).type;
      const noun = wanted === 'integer' ? 'an integer' : wanted === 'boolean' ? 'a boolean' : wanted === 'array' ? 'a list' : wanted === 'object' ? 'a dict' : `a ${wanted}`;
      return errors.invalidArgument(where, `is not ${noun}`);
    }
    case 'required':
      // A key missing inside a JSON parameter, worded as the real server's dict validator words it.
      return errors.badRequest(`${(error.params as { missingProperty: string }).missingProperty} key is missing from ${where}`);
    case 'enum':
      return errors.badRequest(`Invalid ${where}`);
    case 'maxLength':
      return errors.badRequest(`${where} is too long (limit: ${(error.params as { limit: number }).limit} characters)`);
    case 'minLength':
      return errors.badRequest(`${where} is too short`);
    case 'maxItems':
      return errors.badRequest(`${where} has too many items (limit: ${(error.params as { limit: number }).limit})`);
    case 'maxProperties':
      return errors.badRequest(`${where} has too many keys (limit: ${(error.params as { limit: number }).limit})`);
    case 'minimum':
    case 'maximum':
      return errors.badRequest(`Invalid ${where}`);
    default:
      void schema;
      return errors.badRequest(`Invalid ${where}`);
  }
}

export interface ParsedParams<P> {
  params: P;
  ignored: string[];
}

const NUL = /\u0000/;
/**
 * No parameter of the API nests anywhere near this; validating and storing a value nested
 * thousands deep would exhaust the stack (JSON.parse itself copes with any depth).
 */
export const MAX_PARAM_DEPTH = 32;

/** Merges query and body fields, decodes declared types, validates, and lists undeclared names. */
export function parseParams<P>(compiled: CompiledParams, fields: Record<string, unknown>): ParsedParams<P> {
  const values: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [name, raw] of Object.entries(fields)) {
    const schema = compiled.spec.properties[name];
    if (!schema) {
      ignored.push(name);
      continue;
    }
    // A repeated form field arrives as an array of strings; the real server takes the last one.
    const value = Array.isArray(raw) && schemaTypes(schema).every((t) => t !== 'array') ? raw[raw.length - 1] : raw;
    if (typeof value === 'string' && !schema['x-nul-checked'] && NUL.test(value)) throw errors.badRequest(`${name} contains NULL (0x00) characters.`);
    values[name] = decodeField(name, value, schema);
    if (jsonDepthExceeds(values[name], MAX_PARAM_DEPTH)) {
      throw errors.badRequest(`Argument "${name}" is nested too deeply (limit: ${MAX_PARAM_DEPTH} levels)`);
    }
  }
  if (!compiled.validate(values)) throw describeError(compiled.validate.errors![0]!, compiled.spec);
  return { params: values as P, ignored };
}
