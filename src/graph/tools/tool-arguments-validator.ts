import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * A tool's `parameters`: a JSON Schema of the arguments object, draft-07 (the dialect tool-calling APIs use) unless
 * its `$schema` names draft 2019-09 or 2020-12.
 */
export type JsonSchema = Record<string, unknown>;

/**
 * `strict: false` because tool schemas in the wild carry vendor keywords and formats this package does not define;
 * JSON Schema says unknown keywords are ignored. The schema itself is still checked against its dialect's
 * meta-schema, so a misspelt type or a negative bound is refused.
 */
const OPTIONS: Options = { strict: false, allErrors: false, validateFormats: false, logger: false };

/** One validator instance per dialect, made when a schema first asks for it (each compiles its meta-schema). */
const instances = new Map<string, Ajv>();

function validatorFor(schema: JsonSchema | boolean): Ajv {
  const declared = typeof schema === 'object' && typeof schema.$schema === 'string' ? schema.$schema : '';
  const dialect = declared.includes('2020-12') ? '2020-12' : declared.includes('2019-09') ? '2019-09' : 'draft-07';
  let ajv = instances.get(dialect);
  if (ajv === undefined) {
    ajv = dialect === '2020-12' ? new Ajv2020(OPTIONS) : dialect === '2019-09' ? new Ajv2019(OPTIONS) : new Ajv(OPTIONS);
    instances.set(dialect, ajv);
  }
  return ajv;
}

/** Checks arguments against one tool's schema: undefined when they pass, else the first problem with its path. */
export type ArgumentsCheck = (value: unknown) => string | undefined;

/**
 * Compiles a tool's parameters schema once, for checking every call to that tool.
 * @throws Error with ajv's explanation when `schema` is not a valid JSON Schema (the caller names the tool).
 */
export function compileArgumentsCheck(schema: JsonSchema | boolean): ArgumentsCheck {
  const validate = compileAndForget(schema);
  return (value) => (validate(value) ? undefined : describeProblem(validate.errors?.[0], value));
}

/** Why `schema` is not a usable JSON Schema, or undefined when it is. */
export function schemaProblem(schema: JsonSchema | boolean): string | undefined {
  try {
    compileAndForget(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Compiles without keeping the schema in the shared instance: ajv would otherwise refuse a second schema with the same
 * `$id` (the same tool in another agent's graph) and keep every schema ever compiled. The function stays usable.
 */
function compileAndForget(schema: JsonSchema | boolean): ValidateFunction {
  const ajv = validatorFor(schema);
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

/** Checks `value` against `schema`, compiled for this one call: the first problem, or undefined. */
export function checkJsonSchema(value: unknown, schema: JsonSchema | boolean): string | undefined {
  return compileArgumentsCheck(schema)(value);
}

function typeOfJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The readable path of an ajv instancePath (`/tags/1` → `arguments.tags[1]`), walking `root` to tell indices from keys. */
function readablePath(instancePath: string, root: unknown): { path: string; value: unknown } {
  let path = 'arguments';
  let value = root;
  for (const raw of instancePath.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value)) {
      path += `[${key}]`;
      value = value[Number(key)];
    } else {
      path += `.${key}`;
      value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    }
  }
  return { path, value };
}

/** ajv's first error in this package's wording: `<path>: <problem>`, the path naming the offending property. */
function describeProblem(error: ErrorObject | undefined, root: unknown): string {
  if (error === undefined) return 'arguments: do not match the schema';
  const { path, value } = readablePath(error.instancePath, root);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${path}.${String(params.missingProperty)}: required`;
    case 'additionalProperties':
      return `${path}.${String(params.additionalProperty)}: unknown property`;
    case 'type':
      return `${path}: expected ${String(params.type).split(',').join(' or ')}, got ${typeOfJson(value)}`;
    case 'enum':
      return `${path}: must be one of ${(params.allowedValues as unknown[]).map((option) => JSON.stringify(option)).join(', ')}`;
    case 'const':
      return `${path}: must be ${JSON.stringify(params.allowedValue)}`;
    case 'minimum':
      return `${path}: below the minimum ${String(params.limit)}`;
    case 'maximum':
      return `${path}: above the maximum ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `${path}: must be above ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `${path}: must be below ${String(params.limit)}`;
    case 'minLength':
      return `${path}: shorter than ${String(params.limit)}`;
    case 'maxLength':
      return `${path}: longer than ${String(params.limit)}`;
    case 'minItems':
      return `${path}: fewer than ${String(params.limit)} items`;
    case 'maxItems':
      return `${path}: more than ${String(params.limit)} items`;
    case 'pattern':
      return `${path}: does not match ${String(params.pattern)}`;
    case 'false schema':
      return `${path}: not allowed`;
    default:
      return `${path}: ${error.message ?? `fails ${error.keyword}`}`;
  }
}
