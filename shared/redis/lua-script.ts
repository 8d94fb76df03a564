import { readFileSync } from 'node:fs';
import { AgentqError } from '../contracts/errors.js';

/**
 * A Lua script kept as a `.lua` file beside the module that runs it, as its text for `runScript`. The
 * file is found from the caller's URL (`new URL('./lua/x.lua', import.meta.url)`), so it works from the
 * sources (vitest, tsx) and from dist/ (`npm run build` copies the `.lua` files beside the JavaScript).
 *
 * Two forms compose a script from pieces, both resolved here and nowhere else:
 * - a line `--@include <path>` is replaced by that file's text (path relative to the including file),
 *   so helper functions several scripts share are written once;
 * - `{{NAME}}` is replaced by `values[NAME]`: what TypeScript knows and Lua must agree with (a key count,
 *   a field list, the Lua BullMQ's own script files give). A placeholder without a value throws.
 */
export function luaScript(url: URL, values: Readonly<Record<string, string | number>> = {}): string {
  return withIncludes(url, new Set()).replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) {
      throw new AgentqError('INTERNAL', `${url.pathname} needs a value for {{${name}}} and none was given`);
    }
    return String(value);
  });
}

const files = new Map<string, string>();

function read(url: URL): string {
  let text = files.get(url.href);
  if (text === undefined) {
    text = readFileSync(url, 'utf8');
    files.set(url.href, text);
  }
  return text;
}

function withIncludes(url: URL, including: Set<string>): string {
  if (including.has(url.href)) throw new AgentqError('INTERNAL', `${url.pathname} includes itself`);
  const inner = new Set(including).add(url.href);
  return read(url).replace(/^--@include (\S+)[^\S\n]*$/gm, (_, path: string) =>
    withIncludes(new URL(path, url), inner).replace(/\n$/, ''),
  );
}
