import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LUA_FREE_TREES, luaInStrings, luaInStringsUnder, sourceFiles } from '../helpers/lua-in-strings.js';
import { repoRoot } from '../helpers/node-entry.js';

/** The header comment a `.lua` file opens with (`--[[ … ]]`), or undefined. */
function header(text: string): string | undefined {
  return /^--\[\[\n([\s\S]*?)\n\]\]\n/.exec(text)?.[1];
}

/** The highest KEYS index a header declares, from its lines `KEYS[i] …` and `KEYS[i..j] …` ('n': any number, `KEYS[1..n]`). */
function declaredKeys(text: string): number | 'n' {
  let most = 0;
  for (const match of text.matchAll(/^\s*KEYS\[(\d+)(?:\.\.(\d+|n))?\]/gm)) {
    if (match[2] === 'n') return 'n';
    most = Math.max(most, Number(match[2] ?? match[1]));
  }
  return most;
}

/**
 * Lua lives in `.lua` files beside the code that runs it (shared/redis/lua-script.ts loads
 * them), named `<what it does>-<number of keys>.lua` as BullMQ names its scripts, each opening with the
 * KEYS and ARGV it takes (`-n.lua`: any number, `KEYS[1..n]`); a fragment (functions other scripts
 * `--@include`) has no number and says so. Worker threads are TypeScript modules too, not code in strings.
 */
describe('Lua as files, threads as modules', () => {
  const luaFiles = sourceFiles(repoRoot, LUA_FREE_TREES, '.lua');

  it('no TypeScript source of shared/, worker/ or producer/ holds Lua in a string', () => {
    const found = luaInStringsUnder(repoRoot).map(({ file, line }) => `${file}:${line}`);
    expect(found, 'move the script to a .lua file beside its user').toEqual([]);
  });

  it('finds Lua in strings and templates, not in comments', () => {
    const source = [
      "// redis.call('GET', KEYS[1]) in a comment",
      'const a = "return redis.call(\'GET\', KEYS[1])";',
      'const b = `',
      "local function f() return redis.pcall('DEL', KEYS[1]) end",
      '`;',
    ].join('\n');
    expect(luaInStrings('example.ts', source)).toEqual([
      { file: 'example.ts', line: 2, lines: 1 },
      { file: 'example.ts', line: 3, lines: 3 },
    ]);
  });

  it('every script declares its KEYS and ARGV in its header, as many KEYS as its name says', () => {
    expect(luaFiles.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const file of luaFiles) {
      const text = header(readFileSync(join(repoRoot, file), 'utf8'));
      const count = /-(\d+|n)\.lua$/.exec(basename(file))?.[1];
      if (text === undefined) wrong.push(`${file}: no --[[ … ]] header`);
      else if (count === undefined) {
        if (!/Fragment, included/.test(text)) wrong.push(`${file}: neither <name>-<keys>.lua nor a fragment`);
      } else {
        if (String(declaredKeys(text)) !== count) wrong.push(`${file}: header declares ${declaredKeys(text)} KEYS`);
        if (!/ARGV/.test(text)) wrong.push(`${file}: header names no ARGV`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no worker thread runs code from a string (eval: true): each is a module of its own', () => {
    const found = sourceFiles(repoRoot, LUA_FREE_TREES).filter((file) =>
      /\beval:\s*true\b/.test(readFileSync(join(repoRoot, file), 'utf8')),
    );
    expect(found).toEqual([]);
  });

  it('reads the header forms it checks', () => {
    expect(declaredKeys('  KEYS[1] meta\n  KEYS[2] state\n\n  ARGV[1] now')).toBe(2);
    expect(declaredKeys("  KEYS[1..8] the run's keys\n  KEYS[9..19] the queue's")).toBe(19);
    expect(declaredKeys('  KEYS[1..n] the locks')).toBe('n');
    expect(header('--[[\n  KEYS[1] x\n]]\nreturn 1\n')).toBe('  KEYS[1] x');
    expect(header('return 1\n')).toBeUndefined();
  });
});
