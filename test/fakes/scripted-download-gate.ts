import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';

/** The download options of the scripted Batch API (ScriptedBatchApiOptions). */
export interface DownloadGateSettings {
  /** Answer 406 (problem JSON, no `error` member) to a download whose Accept lists no media type of the contract's. @default true */
  strictAccept?: boolean;
  /** The next `times` downloads fail: answered `status` with `body` (default a JSON error), or the connection dropped (`status: 0`). */
  failDownloads?: { times: number; status: number; body?: string; contentType?: string };
}

/**
 * What stands before a results download of the scripted Batch API: the published contract lists only
 * `application/json` for `GET /v1/files/{file_id}/content`, so a strict server answers 406 to any other
 * Accept (as a validating mock does: problem JSON, no `error` member); and scripted failures.
 */
export class DownloadGate {
  constructor(public failuresLeft: number) {}

  /** → true when it answered the download with a refusal (406, or a scripted failure). */
  refused(settings: DownloadGateSettings, accept: string, response: ServerResponse): boolean {
    if ((settings.strictAccept ?? true) && !acceptsJson(accept)) {
      write(response, 406, 'application/problem+json', {
        type: 'https://stoplight.io/prism/errors#NOT_ACCEPTABLE',
        title: 'The server cannot produce a representation for your accept header',
        status: 406,
        detail: `Unable to find content for ${accept}`,
      });
      return true;
    }
    const failure = settings.failDownloads;
    if (!failure || this.failuresLeft <= 0) return false;
    this.failuresLeft -= 1;
    if (failure.status === 0) response.destroy();
    else
      write(
        response,
        failure.status,
        failure.contentType ?? 'application/json',
        failure.body ?? { error: { message: `scripted download failure (HTTP ${failure.status})`, code: null } },
      );
    return true;
  }
}

function write(response: ServerResponse, status: number, contentType: string, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** Whether an Accept header lists `application/json`, itself or by a range. */
function acceptsJson(accept: string): boolean {
  return accept
    .split(',')
    .map((range) => range.split(';')[0]!.trim().toLowerCase())
    .some((type) => type === 'application/json' || type === 'application/*' || type === '*/*');
}
