import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ApiInstance } from '../../producer/api/create-api.js';
import { bearer, KEYS } from './api-test-env.js';

const run = promisify(execFile);

export interface OpenApiOperation {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
}
export interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
}

/** The OpenAPI document the API serves at /docs/json. */
export async function servedDocument(app: ApiInstance): Promise<OpenApiDocument> {
  const response = await app.inject({ method: 'GET', url: '/docs/json', headers: bearer(KEYS.acmeProducer) });
  if (response.statusCode !== 200) throw new Error(`/docs/json answered ${response.statusCode}`);
  return JSON.parse(response.body) as OpenApiDocument;
}

/** Every operation of the document, as `METHOD /path` with the operation. */
export function operationsOf(
  document: OpenApiDocument,
): { key: string; path: string; method: string; operation: OpenApiOperation }[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      key: `${method.toUpperCase()} ${path}`,
      path,
      method: method.toUpperCase(),
      operation,
    })),
  );
}

export interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
}

/** Redocly's recommended rules on `document`, written to `directory`: every problem it reports. */
export async function lintDocument(
  document: unknown,
  directory: string,
  name = 'openapi.json',
): Promise<LintProblem[]> {
  const file = join(directory, name);
  writeFileSync(file, JSON.stringify(document));
  // Exit code 1 is "problems found": the JSON report says which.
  const output = await run(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--format=json'], {
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const report = JSON.parse(output.stdout) as { problems: LintProblem[] };
  return report.problems;
}

/** One answer the API gave: the operation it came from, its status and media type (null: no body). */
export interface ServedAnswer {
  method: string;
  url: string;
  status: number;
  mediaType: string | null;
  /** The media type of the request's body; null without one. */
  requestType: string | null;
}

const templateOf = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);

/** The document's operation for `method url`: a literal path before one with parameters, as the router does. */
export function operationFor(document: OpenApiDocument, method: string, url: string) {
  const path = url.split('?')[0]!;
  const candidates = operationsOf(document)
    .filter((entry) => entry.method === method && templateOf(entry.path).test(path))
    .sort((a, b) => (a.path.match(/\{/g) ?? []).length - (b.path.match(/\{/g) ?? []).length);
  return candidates[0];
}

/**
 * Each exchange the document does not declare, as a sentence: its operation missing, the request's body
 * type missing, its status missing (exactly or as a `4XX`-style range), a body on a status the document
 * gives none, or a media type not among the status's `content`.
 */
export function undeclaredAnswers(document: OpenApiDocument, answers: readonly ServedAnswer[]): string[] {
  const problems: string[] = [];
  for (const answer of answers) {
    const entry = operationFor(document, answer.method, answer.url);
    const label = `${answer.method} ${answer.url} → ${answer.status} ${answer.mediaType ?? '(no body)'}`;
    if (!entry) {
      problems.push(`${label}: no operation`);
      continue;
    }
    if (answer.requestType !== null && !entry.operation.requestBody?.content?.[answer.requestType])
      problems.push(`${label}: request body ${answer.requestType} not declared`);
    const responses = entry.operation.responses;
    const declared = responses[String(answer.status)] ?? responses[`${String(answer.status)[0]}XX`];
    if (!declared) problems.push(`${label}: status not declared`);
    else if (answer.mediaType === null && declared.content) problems.push(`${label}: declared with a body`);
    else if (answer.mediaType !== null && !declared.content?.[answer.mediaType])
      problems.push(`${label}: declared as ${Object.keys(declared.content ?? {}).join(', ') || 'no body'}`);
  }
  return problems;
}
