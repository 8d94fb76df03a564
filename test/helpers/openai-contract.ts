/**
 * OpenAI's own published OpenAPI document as a validator: does a request agentq sends, or a response the
 * scripted server answers, fit the provider's contract? Schemas are checked by ajv 8 (JSON Schema 2020-12,
 * the dialect of OpenAPI 3.1) in strict mode, so a keyword it does not know fails the compile instead of
 * being skipped. The OpenAPI-only keywords the document uses are translated or dropped one by one below.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { parseMultipartParts } from '../fakes/scripted-multipart.js';

/** The document beside the repository (../shared), as the project's machines hold it. */
export const OPENAI_OPENAPI_PATH = fileURLToPath(
  new URL('../../../shared/openai-openapi/openapi.yaml', import.meta.url),
);
export const openAIContractPresent = existsSync(OPENAI_OPENAPI_PATH);

/** One HTTP request as it went over the wire. */
export interface WireRequest {
  method: string;
  /** Path and query, e.g. `/v1/batches?limit=1`. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One HTTP response as it went over the wire. */
export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface OpenAIContract {
  /** What the contract says is wrong with a request (empty: it allows it). */
  checkRequest(request: WireRequest): string[];
  /** What the contract says is wrong with the response to a request (empty: it allows it). */
  checkResponse(request: WireRequest, response: WireResponse): string[];
  /** A value against a named schema of `#/components/schemas`. */
  checkSchema(name: string, value: unknown): string[];
  /** Compiles a schema written in the document's dialect (OpenAPI keywords translated as for the document). */
  compile(schema: Record<string, unknown>): ValidateFunction;
  /** The operation a method and path reach, e.g. `createChatCompletion`; undefined when the contract has none. */
  operationId(method: string, url: string): string | undefined;
}

type Schema = Record<string, unknown>;
interface Operation {
  operationId?: string;
  parameters?: Schema[];
  requestBody?: Schema;
  responses?: Record<string, Schema>;
}

const DOC_ID = 'https://api.openai.com/openapi.json';
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_VALUES = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
]);

/**
 * A schema of the document in plain JSON Schema 2020-12. `component` names the schema being translated,
 * for `$recursiveRef: '#'` (which means that schema itself in the two filters that use it).
 */
export function toJsonSchema(schema: unknown, component = ''): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema as Schema)) {
    // Annotations for humans and SDK generators; they never decide what is valid.
    if (key.startsWith('x-') || key === 'example') continue;
    // A hint telling a reader which oneOf branch to try first: the oneOf beside it still decides validity.
    if (key === 'discriminator') continue;
    // Translated below: OpenAPI 3.0's "null is also allowed" is not a JSON Schema keyword.
    if (key === 'nullable') continue;
    // 2019-09 keywords ajv's 2020 dialect does not have; the document only ever points them at the schema itself.
    if (key === '$recursiveAnchor') continue;
    if (key === '$recursiveRef') out['$ref'] = `${DOC_ID}#/$defs/${component}`;
    else if (key === '$ref') out['$ref'] = String(value).replace('#/components/schemas/', `${DOC_ID}#/$defs/`);
    else if (SCHEMA_MAPS.has(key))
      out[key] = Object.fromEntries(
        Object.entries(value as Schema).map(([name, sub]) => [name, toJsonSchema(sub, component)]),
      );
    else if (SCHEMA_LISTS.has(key)) out[key] = (value as unknown[]).map((sub) => toJsonSchema(sub, component));
    // A name listed twice (ContainerResource) means it once; the meta-schema refuses the repetition.
    else if (key === 'required') out[key] = [...new Set(value as string[])];
    // OpenAPI 3.0's boolean form (`minimum: 0, exclusiveMinimum: true`) is 2020-12's `exclusiveMinimum: 0`.
    else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'boolean') {
      const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
      if (value) out[key] = (schema as Schema)[bound];
    } else if (SCHEMA_VALUES.has(key)) out[key] = toJsonSchema(value, component);
    else out[key] = value;
  }
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const)
    if ((schema as Schema)[exclusive] === true) delete out[bound];
  // Whatever the schema's other keywords say, null is allowed too (a schema with no `type` included).
  if ((schema as Schema)['nullable'] === true) return { anyOf: [out, { type: 'null' }] };
  return out;
}

/** Loads and compiles the document (a few seconds: it is 3 MB of YAML). */
export function loadOpenAIContract(path = OPENAI_OPENAPI_PATH): OpenAIContract {
  const document = parse(readFileSync(path, 'utf8'), { maxAliasCount: -1 }) as {
    servers?: { url: string }[];
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown> } & Record<string, Record<string, Schema>>;
  };
  const basePath = new URL(document.servers?.[0]?.url ?? 'https://api.openai.com/v1').pathname.replace(/\/$/, '');
  const ajv = new Ajv2020({ allErrors: true, strictSchema: true, strictTypes: false, strictTuples: false });
  const addFormats = addFormatsModule as unknown as (instance: Ajv2020) => void;
  addFormats(ajv);
  // OpenAI's own format for Unix times in seconds.
  ajv.addFormat('unixtime', { type: 'number', validate: (value: number) => Number.isInteger(value) });
  const defs = Object.fromEntries(
    Object.entries(document.components.schemas).map(([name, schema]) => [name, toJsonSchema(schema, name)]),
  );
  ajv.addSchema({ $id: DOC_ID, $defs: defs });

  const compiled = new Map<unknown, ValidateFunction>();
  const compile = (schema: Schema): ValidateFunction => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(toJsonSchema(schema) as Schema);
      compiled.set(schema, validate);
    }
    return validate;
  };
  const check = (schema: Schema, value: unknown, where: string): string[] => {
    const validate = compile(schema);
    return validate(value) ? [] : describeErrors(validate.errors, where);
  };
  const checkJson = (schema: Schema, text: string, where: string): string[] => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return [`${where}: not JSON: ${text.slice(0, 80)}`];
    }
    return check(schema, value, where);
  };
  /** `#/components/...` references outside schemas (responses, parameters, request bodies). */
  const deref = <T>(node: T): T => {
    const ref = (node as Schema | undefined)?.['$ref'];
    if (typeof ref !== 'string' || ref.startsWith('#/components/schemas/')) return node;
    const [, , kind = '', name = ''] = ref.split('/');
    return deref(document.components[kind]?.[name] as T);
  };

  function find(method: string, url: string) {
    const { pathname, searchParams } = new URL(url, 'http://contract');
    if (!pathname.startsWith(`${basePath}/`)) return undefined;
    const path = pathname.slice(basePath.length);
    for (const [template, item] of Object.entries(document.paths)) {
      const names = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`);
      const match = pattern.exec(path);
      const operation = item[method.toLowerCase()];
      if (!match || !operation) continue;
      const pathValues = Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(match[index + 1]!)]));
      const parameters = [...((item['parameters'] as unknown as Schema[]) ?? []), ...(operation.parameters ?? [])].map(
        deref,
      );
      return { template, operation, parameters, pathValues, searchParams };
    }
    return undefined;
  }

  return {
    compile,
    operationId: (method, url) => find(method, url)?.operation.operationId,
    checkSchema(name, value) {
      return check({ $ref: `#/components/schemas/${name}` }, value, name);
    },
    checkRequest(request) {
      const found = find(request.method, request.url);
      if (!found) return [`${request.method} ${request.url}: no such operation in the contract`];
      const { operation, parameters, pathValues, searchParams } = found;
      const where = `${request.method} ${found.template}`;
      const problems: string[] = [];
      for (const parameter of parameters) {
        const name = String(parameter['name']);
        const schema = (parameter['schema'] ?? {}) as Schema;
        const raw = parameter['in'] === 'path' ? pathValues[name] : searchParams.get(name);
        if (parameter['in'] !== 'path' && parameter['in'] !== 'query') continue;
        if (raw === undefined || raw === null) {
          if (parameter['required'] === true) problems.push(`${where}: required ${parameter['in']} parameter ${name}`);
          continue;
        }
        problems.push(...check(schema, coerce(raw, schema), `${where} ${parameter['in']} ${name}`));
      }
      const declared = new Set(parameters.filter((p) => p['in'] === 'query').map((p) => String(p['name'])));
      for (const key of searchParams.keys())
        if (!declared.has(key)) problems.push(`${where}: query parameter ${key} is not in the contract`);
      problems.push(...checkAccept(request, operation, where, deref));
      const body = deref(operation.requestBody);
      const content = (body?.['content'] ?? {}) as Record<string, Schema>;
      if (request.body.length === 0) {
        if (body?.['required'] === true) problems.push(`${where}: the request body is required`);
        return problems;
      }
      if (!body) return [...problems, `${where}: the contract takes no request body`];
      const mediaType = mediaTypeOf(request.headers['content-type']);
      const schema = content[mediaType]?.['schema'] as Schema | undefined;
      if (!schema)
        return [...problems, `${where}: request Content-Type ${mediaType} is not one of ${Object.keys(content)}`];
      if (mediaType === 'multipart/form-data')
        return [...problems, ...check(schema, formFields(request), `${where} body`)];
      return [...problems, ...checkJson(schema, request.body.toString('utf8'), `${where} body`)];
    },
    checkResponse(request, response) {
      const found = find(request.method, request.url);
      if (!found) return [`${request.method} ${request.url}: no such operation in the contract`];
      const where = `${request.method} ${found.template} → ${response.status}`;
      const responses = found.operation.responses ?? {};
      const declared = deref(responses[String(response.status)] ?? responses['default']);
      if (!declared) return [`${where}: status not declared (declared: ${Object.keys(responses)})`];
      const content = (declared['content'] ?? {}) as Record<string, Schema>;
      const mediaType = mediaTypeOf(response.headers['content-type']);
      const text = response.body.toString('utf8');
      const listed = content[mediaType]?.['schema'] as Schema | undefined;
      if (!listed) {
        // The file download is declared as a JSON string, but a file is served as its own bytes (JSON
        // Lines here), never wrapped in quotes: its text is checked as that string.
        const only = Object.values(content);
        const rawText = only.length === 1 && (only[0]?.['schema'] as Schema | undefined)?.['type'] === 'string';
        if (rawText) return check(only[0]!['schema'] as Schema, text, `${where} body`);
        return [`${where}: response Content-Type ${mediaType} is not one of ${Object.keys(content)}`];
      }
      if (mediaType !== 'text/event-stream') return checkJson(listed, text, `${where} body`);
      const events = serverSentData(text);
      if (events.at(-1) !== '[DONE]') return [`${where}: the event stream does not end with [DONE]`];
      return events.slice(0, -1).flatMap((data, index) => checkJson(listed, data, `${where} event ${index}`));
    },
  };
}

/** The request's Accept must take one of the media types the operation's success responses list. */
function checkAccept(request: WireRequest, operation: Operation, where: string, deref: <T>(node: T) => T): string[] {
  const accept = request.headers['accept'];
  if (accept === undefined) return [];
  const served = Object.entries(operation.responses ?? {})
    .filter(([status]) => status.startsWith('2'))
    .flatMap(([, response]) => Object.keys((deref(response)['content'] ?? {}) as Schema));
  const wanted = String(accept)
    .split(',')
    .map((range) => range.split(';')[0]!.trim().toLowerCase());
  const takes = (range: string, type: string) =>
    range === '*/*' || range === type || (range.endsWith('/*') && type.startsWith(range.slice(0, -1)));
  if (served.length === 0 || wanted.some((range) => served.some((type) => takes(range, type)))) return [];
  return [`${where}: Accept ${String(accept)} takes none of the media types the contract serves (${served})`];
}

/** A multipart body as the object its schema describes: text fields as strings, a file as its content. */
function formFields(request: WireRequest): Record<string, string> {
  const parts = parseMultipartParts(request.body, String(request.headers['content-type'] ?? ''));
  return Object.fromEntries(parts.map((part) => [part.name, part.content.toString('utf8')]));
}

/** A query or path value typed as its schema says (they are all strings on the wire). */
function coerce(raw: string, schema: Schema): unknown {
  if ((schema['type'] === 'integer' || schema['type'] === 'number') && raw.trim() !== '' && !Number.isNaN(Number(raw)))
    return Number(raw);
  if (schema['type'] === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

/** The `data:` payloads of a server-sent event stream, in order. */
export function serverSentData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n'),
    )
    .filter((data) => data !== '');
}

function mediaTypeOf(header: string | string[] | undefined): string {
  return String(header ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

function describeErrors(errors: ErrorObject[] | null | undefined, where: string): string[] {
  // oneOf failures list every branch's complaint; the first few say enough to find the field.
  return (errors ?? []).slice(0, 8).map((error) => `${where}${error.instancePath || '/'} ${error.message ?? ''}`);
}
