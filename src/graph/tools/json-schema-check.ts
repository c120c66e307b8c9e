/**
 * A small JSON-Schema checker for tool arguments: the subset models and tool authors use (type, enum, const,
 * properties, required, additionalProperties, items, string/number/array bounds, pattern, anyOf/oneOf/allOf).
 * Unknown keywords are ignored, as JSON Schema says. Returns the first problem with its path, or undefined.
 */
export type JsonSchema = Record<string, unknown>;

function typeOfJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOfJson(value);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return actual === type;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function checkJsonSchema(value: unknown, schema: unknown, path = 'arguments'): string | undefined {
  if (schema === true || schema === undefined) return undefined;
  if (schema === false) return `${path}: not allowed`;
  if (!isSchema(schema)) return undefined;

  const type = schema.type;
  if (typeof type === 'string' || Array.isArray(type)) {
    const types = (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === 'string');
    if (!types.some((t) => matchesType(value, t))) return `${path}: expected ${types.join(' or ')}, got ${typeOfJson(value)}`;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => deepEqual(option, value))) {
    return `${path}: must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}`;
  }
  if ('const' in schema && !deepEqual(schema.const, value)) return `${path}: must be ${JSON.stringify(schema.const)}`;

  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) return `${path}: shorter than ${schema.minLength}`;
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return `${path}: longer than ${schema.maxLength}`;
    if (typeof schema.pattern === 'string') {
      let regexp: RegExp | undefined;
      try {
        regexp = new RegExp(schema.pattern, 'u');
      } catch {
        regexp = undefined;
      }
      if (regexp && !regexp.test(value)) return `${path}: does not match ${schema.pattern}`;
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) return `${path}: below the minimum ${schema.minimum}`;
    if (typeof schema.maximum === 'number' && value > schema.maximum) return `${path}: above the maximum ${schema.maximum}`;
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) {
      return `${path}: must be above ${schema.exclusiveMinimum}`;
    }
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) {
      return `${path}: must be below ${schema.exclusiveMaximum}`;
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) return `${path}: fewer than ${schema.minItems} items`;
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return `${path}: more than ${schema.maxItems} items`;
    if (isSchema(schema.items) || typeof schema.items === 'boolean') {
      for (const [index, item] of value.entries()) {
        const problem = checkJsonSchema(item, schema.items, `${path}[${index}]`);
        if (problem) return problem;
      }
    }
  }
  if (typeOfJson(value) === 'object') {
    const object = value as Record<string, unknown>;
    const properties = isSchema(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) {
      for (const name of schema.required) {
        if (typeof name === 'string' && !(name in object)) return `${path}.${name}: required`;
      }
    }
    for (const [name, propertyValue] of Object.entries(object)) {
      if (name in properties) {
        const problem = checkJsonSchema(propertyValue, properties[name], `${path}.${name}`);
        if (problem) return problem;
      } else if (schema.additionalProperties === false) {
        return `${path}.${name}: unknown property`;
      } else if (isSchema(schema.additionalProperties)) {
        const problem = checkJsonSchema(propertyValue, schema.additionalProperties, `${path}.${name}`);
        if (problem) return problem;
      }
    }
  }
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) {
      const problem = checkJsonSchema(value, part, path);
      if (problem) return problem;
    }
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const options = schema[keyword];
    if (Array.isArray(options) && options.length > 0) {
      const problems = options.map((option) => checkJsonSchema(value, option, path));
      const passing = problems.filter((problem) => problem === undefined).length;
      if (passing === 0) return problems[0];
      if (keyword === 'oneOf' && passing > 1) return `${path}: matches more than one of oneOf`;
    }
  }
  return undefined;
}
