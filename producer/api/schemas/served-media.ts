import { z } from 'zod';
import { scheduleSpecSchema } from '../../../shared/operations/schedules/schedule-schema.js';
import type { ServedMedia } from '../openapi-served.js';

/**
 * Documentation-only bodies and answers (see openapi-served.ts): each route's handler validates what it
 * accepts itself, so none of these changes what a request may be.
 */

/** A Server-Sent Events stream: `event:`/`id:`/`data:` lines, each event ended by a blank line. */
const eventStream = { type: 'string', description: 'text/event-stream: `event`, `id` and `data` (JSON) lines' };

/** The JSON Lines media types a batch upload is accepted as. */
export const JSONL_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/x-jsonlines'] as const;

const jsonLines = (what: string) => ({ type: 'string', description: `JSON Lines: ${what}, one JSON object a line` });

export const eventsServed: ServedMedia = {
  responses: {
    200: {
      description: "the run's events, past then live, until `run-end`",
      content: { 'text/event-stream': eventStream },
      replaces: true,
    },
  },
};

export const chatServed: ServedMedia = {
  responses: {
    200: {
      description:
        'ChatAnswer; with `"stream": true`, Server-Sent Events: `run`, `reasoning`, `token`/`token-reset`, then `answer` (the ChatAnswer) or `error` (the error body and its status)',
      content: { 'text/event-stream': eventStream },
    },
  },
};

export const batchResultsServed: ServedMedia = {
  responses: {
    200: {
      description: 'the batch record; with `?format=csv` or `?format=jsonl` its results so far as a file',
      content: {
        'text/csv': { type: 'string', description: 'one row a question, in order, with a header row' },
        'application/x-ndjson': jsonLines('one result a question, in order'),
      },
    },
  },
};

export const batchUploadServed: ServedMedia = {
  body: Object.fromEntries(JSONL_TYPES.map((type) => [type, jsonLines('`{"id"?, "question"}`')])),
};

export const metricsServed: ServedMedia = {
  responses: {
    200: {
      description: 'Prometheus text format 0.0.4',
      content: { 'text/plain': { type: 'string' } },
      replaces: true,
    },
  },
};

export const documentUploadServed: ServedMedia = {
  body: {
    'multipart/form-data': {
      type: 'object',
      properties: {
        file: {
          type: 'array',
          items: { type: 'string', format: 'binary' },
          description: 'one or more file parts (any part name): PDF, DOCX, HTML, Markdown, text',
        },
        collection: { type: 'string', description: 'the collection to index into (default `default`)' },
      },
      required: ['file'],
    },
  },
};

export const scheduleCreateServed: ServedMedia = { body: { 'application/json': scheduleSpecSchema } };

/** A schedule's PATCH body: any field of the create body; `null` clears an optional one. */
function schedulePatchSchema(): Record<string, unknown> {
  const { $schema: _dialect, ...spec } = z.toJSONSchema(scheduleSpecSchema, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown> & { properties: Record<string, unknown>; required?: string[] };
  const properties = Object.fromEntries(
    Object.entries(spec.properties).map(([name, schema]) => [name, { anyOf: [schema, { type: 'null' }] }]),
  );
  const { required: _required, ...optional } = { ...spec, properties };
  return optional;
}

export const schedulePatchServed: ServedMedia = { body: { 'application/json': schedulePatchSchema() } };
