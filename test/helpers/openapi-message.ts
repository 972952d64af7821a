import type { ValidateFunction } from 'ajv';
import { compileSchema, openapi, toJsonSchema } from './openapi.js';

/** Validators compiled from the real server's OpenAPI document (GET /messages items, GET /messages/{id}). */
function successSchema(path: string, method: string): Record<string, any> {
  const schema = openapi.paths[path][method].responses['200'].content['application/json'].schema;
  return schema.allOf.find((s: Record<string, any>) => s.properties && (s.properties.messages || s.properties.message));
}

export const validateListedMessage: ValidateFunction = compileSchema(toJsonSchema(successSchema('/messages', 'get').properties.messages.items));
export const validateSingleMessage: ValidateFunction = compileSchema(toJsonSchema(successSchema('/messages/{message_id}', 'get').properties.message));
