/**
 * A parsing thread (worker_threads): parses and chunks one document at a time for the ParsePool, so the
 * CPU-heavy work (pdf.js, tokenizing) runs off the worker's event loop and never delays the lock
 * renewal of step jobs running in the same process.
 */
import { parentPort } from 'node:worker_threads';
import { AgentqError } from '../../shared/contracts/errors.js';
import { parseDocument } from './parsers/parse-document.js';
import { chunkDocument } from './chunker.js';
import type { ParseReply, ParseRequest } from './parse-messages.js';

if (!parentPort) throw new Error('parse-thread runs inside a worker thread of the ParsePool');
const port = parentPort;

port.on('message', (request: ParseRequest) => {
  void (async () => {
    let reply: ParseReply;
    try {
      const parsed = await parseDocument(request.bytes, request.name);
      const { chunks } = chunkDocument(parsed, { maxTokens: request.maxTokens, overlapTokens: request.overlapTokens });
      reply = {
        id: request.id,
        ok: true,
        type: parsed.type,
        title: parsed.title,
        pages: parsed.pages,
        chunks,
        ...(parsed.metadata ? { metadata: parsed.metadata } : {}),
      };
    } catch (error) {
      const known = AgentqError.isInstance(error);
      reply = {
        id: request.id,
        ok: false,
        code: known ? error.code : 'PARSE_ERROR',
        message: known ? error.message : `parsing failed (${error instanceof Error ? error.message : String(error)})`,
      };
    }
    port.postMessage(reply);
  })();
});
port.postMessage({ ready: true });
