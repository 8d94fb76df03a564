/**
 * The Batch API of the scripted OpenAI-compatible server (scripted-openai-server.ts plugs it in):
 * `POST /v1/files` (multipart, purpose `batch`), `GET /v1/files`, `GET /v1/files/:id/content`,
 * `POST /v1/batches`, `GET /v1/batches/:id`, `GET /v1/batches` (newest first, `after` pagination),
 * `POST /v1/batches/:id/cancel`. A batch goes validating → in_progress → completed on a clock the test
 * sets; each request line is answered by the server's chat script (the same answers a live call gets),
 * fault answers becoming error lines. Tests script expiry, failure, bad results files and faults per route,
 * and read what was uploaded and created (`files`, `batches`), to count duplicates.
 */
import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import { DownloadGate, type DownloadGateSettings } from './scripted-download-gate.js';
import { parseMultipart } from './scripted-multipart.js';

/** A route of the Batch API, for faults. */
export type BatchApiRoute =
  | 'files.create'
  | 'files.list'
  | 'files.content'
  | 'batches.create'
  | 'batches.retrieve'
  | 'batches.list'
  | 'batches.cancel';

/** An HTTP fault answered instead of a route's normal answer (as the chat script's faults). */
export interface BatchApiFault {
  status: number;
  code?: string;
  message?: string;
}

/** How a batch ends, decided when its processing time is over. */
export type ScriptedBatchOutcome =
  | { status: 'completed' }
  /** The window ran out: the first `answered` requests were answered, the others expired (error file). */
  | { status: 'expired'; answered?: number }
  /** The input file failed validation: nothing answered. */
  | { status: 'failed'; message?: string };

/** Downloads: `strictAccept` (406 to an Accept without the contract's type, default on) and `failDownloads`. */
export interface ScriptedBatchApiOptions extends DownloadGateSettings {
  /** Time in `validating`. @default 0 */
  validatingMs?: number;
  /** Time in `in_progress` before the batch ends: the scripted provider delay. @default 0 */
  processingMs?: number;
  /** While true, the batch stays in_progress past its processing time (its 0-based creation index): a test looks at it in flight. */
  hold?: (batch: ScriptedBatch, index: number) => boolean;
  /** How each batch ends (its 0-based creation index). @default completed */
  outcome?: (batch: ScriptedBatch, index: number) => ScriptedBatchOutcome;
  /** A fault for a request to a route (`undefined`: answer normally). Called once per request. */
  fault?: (route: BatchApiRoute, path: string) => BatchApiFault | undefined;
  /** Rewrite a results file before it is stored (tests of malformed lines, unknown or missing custom_ids). */
  outputFile?: (lines: string[], batch: ScriptedBatch) => string;
}

/** What the fake was asked, to count duplicates. */
export interface ScriptedBatchApiCounts {
  /** `POST /v1/batches` that created a batch. */
  batchesCreated: number;
  /** `POST /v1/files` that stored a file (not the output files the fake writes). */
  filesUploaded: number;
  /** `GET /v1/files/:id/content` answered with the file. */
  downloads: number;
  /** Downloads refused: 406 for the Accept header, or a scripted failure. */
  downloadsRefused: number;
}

/** A file as uploaded. */
export interface ScriptedFile {
  id: string;
  filename: string;
  purpose: string;
  content: string;
  createdAt: number;
}

/** A batch as the fake holds it. */
export interface ScriptedBatch {
  id: string;
  inputFileId: string;
  endpoint: string;
  completionWindow: string;
  metadata: Record<string, string>;
  /** ms */
  createdMs: number;
  status: string;
  outputFileId?: string;
  errorFileId?: string;
  requestCounts: { total: number; completed: number; failed: number };
  errors?: { code: string; message: string; line: number | null }[];
  /** The request lines of its input file. */
  lines: { custom_id: string; method: string; url: string; body: Record<string, unknown> }[];
  cancelRequested: boolean;
}

/** What the server does to answer one chat body (its chat script), as a status and a JSON body. */
export type ChatAnswerer = (body: Record<string, unknown>) => Promise<{ status: number; body: unknown }>;

export interface ScriptedBatchApi {
  /** Every upload, in order. */
  readonly files: readonly ScriptedFile[];
  /** Every batch created, in order. */
  readonly batches: readonly ScriptedBatch[];
  /** Request lines of every batch created (its custom_ids), in order. */
  customIds(): string[];
  /** Batches created, files uploaded and downloads answered or refused so far. */
  counts(): ScriptedBatchApiCounts;
  /** Change the options (timings, outcome, faults) from now on. */
  configure(options: ScriptedBatchApiOptions): void;
  /** → true when it answered the request (a Batch API route), false to let the server answer 404. */
  handle(
    method: string,
    url: string,
    rawBody: string,
    headers: Record<string, unknown>,
    response: ServerResponse,
  ): Promise<boolean>;
}

/** The Batch API of one scripted server; `answerChat` is its chat script. */
export function createScriptedBatchApi(options: ScriptedBatchApiOptions, answerChat: ChatAnswerer): ScriptedBatchApi {
  let settings = { ...options };
  const files: ScriptedFile[] = [];
  const batches: ScriptedBatch[] = [];
  const finishing = new Map<string, Promise<void>>();
  const counts: ScriptedBatchApiCounts = { batchesCreated: 0, filesUploaded: 0, downloads: 0, downloadsRefused: 0 };
  const downloadGate = new DownloadGate(options.failDownloads?.times ?? 0);

  const send = (response: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  };
  const error = (response: ServerResponse, status: number, message: string, code: string | null = null) =>
    send(response, status, { error: { message, type: 'invalid_request_error', param: null, code } });

  function storeFile(filename: string, purpose: string, content: string): ScriptedFile {
    const file = { id: `file-scripted-${files.length}`, filename, purpose, content, createdAt: Date.now() };
    files.push(file);
    return file;
  }

  function fileJson(file: ScriptedFile) {
    return {
      id: file.id,
      object: 'file',
      bytes: Buffer.byteLength(file.content),
      created_at: Math.floor(file.createdAt / 1000),
      filename: file.filename,
      purpose: file.purpose,
      status: 'processed',
    };
  }

  function batchJson(batch: ScriptedBatch) {
    return {
      id: batch.id,
      object: 'batch',
      endpoint: batch.endpoint,
      input_file_id: batch.inputFileId,
      completion_window: batch.completionWindow,
      status: batch.status,
      created_at: Math.floor(batch.createdMs / 1000),
      metadata: batch.metadata,
      request_counts: batch.requestCounts,
      ...(batch.outputFileId ? { output_file_id: batch.outputFileId } : {}),
      ...(batch.errorFileId ? { error_file_id: batch.errorFileId } : {}),
      ...(batch.errors ? { errors: { object: 'list', data: batch.errors } } : {}),
    };
  }

  /** Moves a batch along its clock; ends it (answers its lines) once its processing time is over. */
  async function advance(batch: ScriptedBatch): Promise<void> {
    if (['completed', 'expired', 'failed', 'cancelled'].includes(batch.status)) return;
    if (batch.cancelRequested) {
      await finish(batch, 'cancelled');
      return;
    }
    const age = Date.now() - batch.createdMs;
    const validating = settings.validatingMs ?? 0;
    if (age < validating) return;
    const index = batches.indexOf(batch);
    if (age < validating + (settings.processingMs ?? 0) || settings.hold?.(batch, index)) {
      batch.status = 'in_progress';
      return;
    }
    const outcome = settings.outcome?.(batch, index) ?? { status: 'completed' as const };
    await finish(batch, outcome.status, outcome);
  }

  function finish(batch: ScriptedBatch, status: string, outcome?: ScriptedBatchOutcome): Promise<void> {
    let running = finishing.get(batch.id);
    if (!running) {
      running = answerLines(batch, status, outcome);
      finishing.set(batch.id, running);
    }
    return running;
  }

  async function answerLines(batch: ScriptedBatch, status: string, outcome?: ScriptedBatchOutcome): Promise<void> {
    if (status === 'failed') {
      batch.errors = [
        { code: 'invalid_request', message: (outcome as { message?: string })?.message ?? 'scripted failure', line: 1 },
      ];
      batch.status = 'failed';
      return;
    }
    const answered =
      status === 'cancelled' ? 0 : status === 'expired' ? ((outcome as { answered?: number }).answered ?? 0) : Infinity;
    const output: string[] = [];
    const errors: string[] = [];
    let completed = 0;
    let failed = 0;
    for (const [position, line] of batch.lines.entries()) {
      if (position >= answered) {
        const code = status === 'expired' ? 'batch_expired' : 'batch_cancelled';
        const message =
          status === 'expired'
            ? 'This request could not be executed before the completion window expired.'
            : 'This request was not executed because the batch was cancelled.';
        errors.push(
          JSON.stringify({
            id: `batch_req_${position}`,
            custom_id: line.custom_id,
            response: null,
            error: { code, message },
          }),
        );
        failed += 1;
        continue;
      }
      const answer = await answerChat(line.body);
      const record = JSON.stringify({
        id: `batch_req_${position}`,
        custom_id: line.custom_id,
        response: { status_code: answer.status, request_id: `req_batch_${position}`, body: answer.body },
        error: null,
      });
      if (answer.status === 200) {
        output.push(record);
        completed += 1;
      } else {
        errors.push(record);
        failed += 1;
      }
    }
    const outputText = settings.outputFile
      ? settings.outputFile(output, batch)
      : output.join('\n') + (output.length ? '\n' : '');
    if (output.length > 0 || settings.outputFile)
      batch.outputFileId = storeFile(`${batch.id}_output.jsonl`, 'batch_output', outputText).id;
    if (errors.length > 0)
      batch.errorFileId = storeFile(`${batch.id}_error.jsonl`, 'batch_output', errors.join('\n') + '\n').id;
    batch.requestCounts = { total: batch.lines.length, completed, failed };
    batch.status = status;
  }

  async function handle(
    method: string,
    url: string,
    rawBody: string,
    headers: Record<string, unknown>,
    response: ServerResponse,
  ): Promise<boolean> {
    const [path = '/', query = ''] = url.split('?');
    const params = new URLSearchParams(query);
    const route = routeOf(method, path);
    if (!route) return false;
    const fault = settings.fault?.(route, path);
    if (fault) {
      send(response, fault.status, {
        error: {
          message: fault.message ?? `scripted ${route} fault (HTTP ${fault.status})`,
          type: fault.status >= 500 ? 'server_error' : 'invalid_request_error',
          param: null,
          code: fault.code ?? null,
        },
      });
      return true;
    }
    switch (route) {
      case 'files.create': {
        const form = parseMultipart(rawBody, String(headers['content-type'] ?? ''));
        if (!form.file) return (error(response, 400, "Missing required parameter: 'file'."), true);
        if (form.fields.purpose !== 'batch') return (error(response, 400, "'purpose' must be 'batch' here"), true);
        counts.filesUploaded += 1;
        send(response, 200, fileJson(storeFile(form.file.filename, 'batch', form.file.content)));
        return true;
      }
      case 'files.list': {
        const purpose = params.get('purpose');
        const data = files
          .filter((file) => !purpose || file.purpose === purpose)
          .reverse()
          .map(fileJson);
        // The contract requires both ids as strings, even for an empty page.
        const ends = { first_id: data[0]?.id ?? '', last_id: data.at(-1)?.id ?? '' };
        send(response, 200, { object: 'list', data, ...ends, has_more: false });
        return true;
      }
      case 'files.content': {
        const id = decodeURIComponent(path.split('/')[3] ?? '');
        const file = files.find((candidate) => candidate.id === id);
        if (!file) return (error(response, 404, `No such File object: ${id}`), true);
        const accept = String(headers['accept'] ?? '*/*');
        if (downloadGate.refused(settings, accept, response)) return ((counts.downloadsRefused += 1), true);
        counts.downloads += 1;
        response.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': Buffer.byteLength(file.content),
        });
        response.end(file.content);
        return true;
      }
      case 'batches.create': {
        const body = JSON.parse(rawBody || '{}') as {
          input_file_id?: string;
          endpoint?: string;
          completion_window?: string;
          metadata?: Record<string, string>;
        };
        const file = files.find((candidate) => candidate.id === body.input_file_id);
        if (!file) return (error(response, 400, `No such File object: ${body.input_file_id}`), true);
        if (body.endpoint !== '/v1/chat/completions')
          return (error(response, 400, `unsupported endpoint ${body.endpoint}`), true);
        const lines = file.content
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as ScriptedBatch['lines'][number]);
        const batch: ScriptedBatch = {
          id: `batch_scripted_${batches.length}`,
          inputFileId: file.id,
          endpoint: body.endpoint,
          completionWindow: body.completion_window ?? '24h',
          metadata: body.metadata ?? {},
          createdMs: Date.now(),
          status: 'validating',
          requestCounts: { total: lines.length, completed: 0, failed: 0 },
          lines,
          cancelRequested: false,
        };
        batches.push(batch);
        counts.batchesCreated += 1;
        send(response, 200, batchJson(batch));
        return true;
      }
      case 'batches.list': {
        const limit = Number(params.get('limit') ?? 20);
        const after = params.get('after');
        const newest = [...batches].reverse();
        const start = after ? newest.findIndex((batch) => batch.id === after) + 1 : 0;
        const page = newest.slice(start, start + limit);
        for (const batch of page) await advance(batch);
        send(response, 200, {
          object: 'list',
          data: page.map(batchJson),
          // Strings when present (the contract has no null here), absent for an empty page.
          ...(page.length > 0 ? { first_id: page[0]!.id, last_id: page.at(-1)!.id } : {}),
          has_more: start + limit < newest.length,
        });
        return true;
      }
      case 'batches.retrieve':
      case 'batches.cancel': {
        const id = decodeURIComponent(path.split('/')[3] ?? '');
        const batch = batches.find((candidate) => candidate.id === id);
        if (!batch) return (error(response, 404, `No batch found with id '${id}'.`), true);
        if (route === 'batches.cancel' && !['completed', 'expired', 'failed', 'cancelled'].includes(batch.status)) {
          batch.cancelRequested = true;
          batch.status = 'cancelling';
          send(response, 200, batchJson(batch));
          return true;
        }
        await advance(batch);
        send(response, 200, batchJson(batch));
        return true;
      }
    }
  }

  return {
    files,
    batches,
    customIds: () => batches.flatMap((batch) => batch.lines.map((line) => line.custom_id)),
    counts: () => ({ ...counts }),
    configure(next) {
      settings = { ...settings, ...next };
      if ('failDownloads' in next) downloadGate.failuresLeft = next.failDownloads?.times ?? 0;
    },
    handle,
  };
}

function routeOf(method: string, path: string): BatchApiRoute | undefined {
  if (method === 'POST' && path === '/v1/files') return 'files.create';
  if (method === 'GET' && path === '/v1/files') return 'files.list';
  if (method === 'GET' && /^\/v1\/files\/[^/]+\/content$/.test(path)) return 'files.content';
  if (method === 'POST' && path === '/v1/batches') return 'batches.create';
  if (method === 'GET' && path === '/v1/batches') return 'batches.list';
  if (method === 'GET' && /^\/v1\/batches\/[^/]+$/.test(path)) return 'batches.retrieve';
  if (method === 'POST' && /^\/v1\/batches\/[^/]+\/cancel$/.test(path)) return 'batches.cancel';
  return undefined;
}
