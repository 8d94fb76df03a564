import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';

/**
 * The JSON Schema of a zod schema in the form strict structured output accepts (OpenAI's
 * `response_format: {type: 'json_schema', strict: true}`): an object at the root, every object closed
 * (`additionalProperties: false`) and every property required. An optional field cannot be expressed
 * there, so it is refused with a message saying to use `.nullable()` instead.
 */
export function strictJsonSchema(schema: z.ZodType, name: string): Record<string, unknown> {
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { io: 'output' }) as Record<string, unknown>;
  } catch (error) {
    throw new AgentqError(
      'INVALID_INPUT',
      `structured output '${name}': the schema cannot be expressed as JSON Schema (${(error as Error).message})`,
      { cause: error },
    );
  }
  delete json.$schema;
  if (json.type !== 'object') {
    throw new AgentqError(
      'INVALID_INPUT',
      `structured output '${name}': the schema must be a z.object(...) (strict mode wants an object at the root), got JSON Schema type '${String(json.type)}'`,
    );
  }
  closeObjects(json, name, '');
  return json;
}

function closeObjects(node: unknown, name: string, path: string): void {
  if (Array.isArray(node)) {
    node.forEach((item, index) => closeObjects(item, name, `${path}[${index}]`));
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Record<string, unknown>;
  const properties = schema.properties as Record<string, unknown> | undefined;
  if (schema.type === 'object' || properties) {
    const keys = Object.keys(properties ?? {});
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const optional = keys.filter((key) => !required.has(key));
    if (optional.length > 0) {
      throw new AgentqError(
        'INVALID_INPUT',
        `structured output '${name}': field${optional.length > 1 ? 's' : ''} ${optional.map((key) => `'${path ? `${path}.` : ''}${key}'`).join(', ')} ${optional.length > 1 ? 'are' : 'is'} optional, which strict mode cannot express; use .nullable() instead of .optional()`,
      );
    }
    schema.additionalProperties = false;
    schema.required = keys;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && value && typeof value === 'object') {
      for (const [property, child] of Object.entries(value))
        closeObjects(child, name, path ? `${path}.${property}` : property);
    } else if (typeof value === 'object') {
      closeObjects(value, name, path);
    }
  }
}
