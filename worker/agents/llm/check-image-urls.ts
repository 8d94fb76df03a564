import { isIP } from 'node:net';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { contentImages, type Message } from '../../../shared/contracts/run-record.js';
import { isPublicAddress, resolveHost, type ResolveHost } from '../../runtime/public-address.js';

/** An image URL refused, as the run's error: the input is wrong, asking again does not help. */
function refused(index: number, url: string, why: string): AgentqError {
  const shown = url.length > 120 ? `${url.slice(0, 120)}…` : url;
  return new AgentqError(
    'INVALID_INPUT',
    `image part ${index} (${shown}) ${why}; the model server would fetch it from inside this deployment's network. Send a public http(s) URL, or the picture itself as a data:image/… URL`,
    { details: [{ path: `images.${index}.image_url.url`, message: why }] },
  );
}

/**
 * Refuses a model request whose image parts the model server would fetch from where it must not: the
 * same addresses `http_fetch` refuses (private, loopback, link-local with the cloud metadata service,
 * and the other ranges of isPublicAddress), checked after resolving the name as `http_fetch` does, and
 * any scheme but http(s) and data:image. The model server resolves the name again when it fetches, so
 * this stops what a caller writes, not a name whose records change between the two lookups
 * (AGENTQ_CHECK_IMAGE_URLS=false turns the check off for a model server that never fetches).
 */
export async function checkImageUrls(messages: readonly Message[], resolve: ResolveHost = resolveHost): Promise<void> {
  // Most prompts carry no image: looked for first, so they cost no arrays, set or promises per model call.
  if (!messages.some(({ content }) => Array.isArray(content) && content.some((part) => part.type === 'image_url')))
    return;
  const urls = [
    ...new Set(messages.flatMap((message) => contentImages(message.content).map((part) => part.image_url.url))),
  ];
  await Promise.all(urls.map(async (url, index) => checkImageUrl(url, index, resolve)));
}

async function checkImageUrl(url: string, index: number, resolve: ResolveHost): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refused(index, url, 'is not a URL');
  }
  if (parsed.protocol === 'data:') {
    if (/^data:image\/[\w.+-]+[;,]/i.test(url)) return;
    throw refused(index, url, 'is a data: URL of something other than an image');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw refused(index, url, `has the scheme ${parsed.protocol} (only http, https and data:image are sent)`);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await resolve(host)).map((entry) => entry.address);
    } catch {
      throw refused(index, url, `names a host that does not resolve (${host})`);
    }
  }
  if (addresses.length === 0) throw refused(index, url, `names a host that does not resolve (${host})`);
  if (!addresses.every(isPublicAddress))
    throw refused(index, url, 'points to a private, loopback or link-local address (e.g. the cloud metadata service)');
}
