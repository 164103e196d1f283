import { Ajv, type ValidateFunction } from 'ajv';

/**
 * A JSON schema compiled by its own ajv instance: ajv caches every schema it compiles, and a shared
 * instance would keep every tenant's schema for the life of the process. Throws when `schema` is not one.
 */
export function compileJsonSchema(schema: object): ValidateFunction {
  return new Ajv({ allErrors: false, strict: false }).compile(schema);
}
