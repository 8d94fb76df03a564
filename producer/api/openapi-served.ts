import type { FastifySchema } from 'fastify';
import { createJsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/** A response the route serves that its zod schemas cannot say: another media type, or none. */
interface ServedResponse {
  description: string;
  /** Media type → JSON Schema (or a zod schema) of the body. */
  content: Record<string, JsonSchema | z.ZodType>;
  /** Drop the media type the zod response schema of this status declared (a route that never answers JSON). */
  replaces?: boolean;
}

/**
 * What a route serves and accepts beyond its validation schemas, for the OpenAPI document only: nothing
 * here validates or serializes a request. It is for bodies that a validation schema would get in the way
 * of (a multipart upload streamed by its handler, a JSON Lines upload, a body its handler validates with
 * its own messages) and for answers that are not JSON (event streams, CSV, Prometheus text).
 */
export interface ServedMedia {
  /** Request bodies by media type, beside the route's `body` (which stays `application/json`). */
  body?: Record<string, JsonSchema | z.ZodType>;
  responses?: Record<number, ServedResponse>;
}

declare module 'fastify' {
  interface FastifySchema {
    /** Documentation-only declarations (openapi-served.ts): read by the OpenAPI transform, never by validation. */
    served?: ServedMedia;
  }
}

/** A request or response body as JSON Schema (draft 2020-12, as OpenAPI 3.1 has it). */
function jsonSchemaOf(schema: JsonSchema | z.ZodType, io: 'input' | 'output'): JsonSchema {
  if (!(schema instanceof z.ZodType)) return schema;
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return json;
}

const mediaOf = (content: Record<string, JsonSchema | z.ZodType>, io: 'input' | 'output') =>
  Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema: jsonSchemaOf(schema, io) }]));

type RouteDocument = Parameters<ReturnType<typeof createJsonSchemaTransform>>[0];
type TransformedSchema = Record<string, unknown> & { response?: Record<string, unknown>; served?: ServedMedia };

/** The zod transform, then each route's `served` declarations; a 204 declares no body, as none is sent. */
export function servedSchemaTransform(): (document: RouteDocument) => { schema: FastifySchema; url: string } {
  const zodTransform = createJsonSchemaTransform({ skipList: [] });
  return (document) => {
    const transformed = zodTransform(document) as { schema: TransformedSchema | undefined; url: string };
    const schema = transformed.schema;
    if (!schema || schema.hide) return transformed as { schema: FastifySchema; url: string };
    const { served, ...rest } = schema;
    const response: Record<string, unknown> = { ...(rest.response ?? {}) };
    if (response['204'] !== undefined) {
      const declared = response['204'] as { description?: string };
      response['204'] = { type: 'null', description: declared.description ?? 'No Content' };
    }
    for (const [status, answer] of Object.entries(served?.responses ?? {})) {
      const declared = response[status] as (JsonSchema & { content?: unknown }) | undefined;
      const json = declared && !answer.replaces ? { 'application/json': { schema: declared } } : {};
      response[status] = {
        description: answer.description,
        content: { ...json, ...mediaOf(answer.content, 'output') },
      };
    }
    const out: Record<string, unknown> = { ...rest, response };
    if (served?.body) {
      out.body = {
        content: {
          ...(rest.body ? { 'application/json': { schema: rest.body } } : {}),
          ...mediaOf(served.body, 'input'),
        },
      };
    }
    return { schema: out as FastifySchema, url: transformed.url };
  };
}
