import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { defineTool, type Tool } from '../../../shared/ports/define-tool.js';
import { fetchAllowedUrl, type FetchAllowedUrlOptions, type FetchedResponse } from './fetch-allowed-url.js';

export type HttpFetchToolOptions = Omit<FetchAllowedUrlOptions, 'abortSignal'>;

const httpFetchInput = z.object({
  url: z.string().min(1).max(2048).describe('The absolute http:// or https:// URL to fetch'),
});

/** What the model gets back. */
export interface HttpFetchResult {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  contentType: string;
  /** The page's title, for HTML. */
  title?: string;
  /** The text (HTML reduced to its headings and paragraphs). */
  text: string;
  /** The body was longer than AGENTQ_HTTP_FETCH_MAX_BYTES and was cut. */
  truncated: boolean;
}

/**
 * The `http_fetch` tool: GET a page from an allowlisted host and return its text. Off unless
 * AGENTQ_HTTP_FETCH_ALLOW_HOSTS lists hosts; private, loopback and link-local addresses are refused
 * after DNS resolution and on every redirect (see `fetchAllowedUrl`). A refusal or failure reaches the
 * model as the tool's error message, so it can try another URL or answer without it.
 */
export function createHttpFetchTool(options: HttpFetchToolOptions): Tool<z.infer<typeof httpFetchInput>> {
  if (options.allowHosts.length === 0) {
    throw new AgentqError(
      'INVALID_INPUT',
      'the http_fetch tool needs at least one allowed host (AGENTQ_HTTP_FETCH_ALLOW_HOSTS)',
    );
  }
  return defineTool({
    name: 'http_fetch',
    description:
      `Fetches a web page or text document with HTTP GET and returns its text (HTML is reduced to headings and paragraphs). ` +
      `Only these hosts can be fetched: ${options.allowHosts.join(', ')}.`,
    input: httpFetchInput,
    execute: async ({ url }, { abortSignal }): Promise<HttpFetchResult> =>
      await toResult(await fetchAllowedUrl(url, { ...options, abortSignal })),
  });
}

async function toResult(response: FetchedResponse): Promise<HttpFetchResult> {
  const { url, status, contentType, body, truncated } = response;
  const mediaType = contentType.split(';')[0]!.trim();
  const text = decode(body, contentType);
  if (
    mediaType === 'text/html' ||
    mediaType === 'application/xhtml+xml' ||
    (mediaType === '' && /^\s*<(!doctype html|html)/i.test(text))
  ) {
    // The HTML parser (linkedom and its DOM) is loaded by the first page fetched, not by every worker's start.
    const { parseHtml } = await import('../../ingest/parsers/parse-html.js');
    const page = parseHtml(text);
    const lines = page.blocks.map((block) =>
      block.kind === 'heading' ? `${'#'.repeat(block.level)} ${block.text}` : block.text,
    );
    return {
      url,
      status,
      contentType,
      ...(page.title ? { title: page.title } : {}),
      text: lines.join('\n\n'),
      truncated,
    };
  }
  if (
    mediaType === '' ||
    mediaType.startsWith('text/') ||
    /^application\/([\w.+-]+\+)?(json|xml)$/.test(mediaType) ||
    mediaType === 'application/javascript'
  ) {
    return { url, status, contentType, text, truncated };
  }
  throw new AgentqError('TOOL_ERROR', `${url} is ${mediaType}, not text or HTML; http_fetch only reads text`);
}

function decode(body: Buffer, contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1]?.toLowerCase() ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    // An unknown charset label: UTF-8 is the web's default and right most of the time.
    return new TextDecoder('utf-8').decode(body);
  }
}
