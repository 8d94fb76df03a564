import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type TypeScript from 'typescript';

/** The trees whose TypeScript must hold no Lua: the scripts live in `.lua` files beside their users. */
export const LUA_FREE_TREES = ['shared', 'worker', 'producer'];

/** What marks Lua: a call into Redis (what the guard looks for), or, more widely, a function or an argument. */
export const REDIS_CALL = /redis\.p?call\(/;
export const LUA_MARKS = /redis\.p?call\(|\blocal function\b|\bARGV\[\d/;

/** A string or template literal of a TypeScript source that holds Lua (a `redis.call(` or `redis.pcall(`). */
export interface LuaInString {
  file: string;
  line: number;
  /** The lines of source the literal spans. */
  lines: number;
}

/** The `.ts` files under `root`'s trees, relative to `root`, without node_modules and dist. */
export function sourceFiles(root: string, trees: readonly string[], extension = '.ts'): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      } else if (entry.name.endsWith(extension)) files.push(path);
    }
  };
  for (const tree of trees) walk(tree);
  return files;
}

/**
 * The literals of one TypeScript source that hold Lua, as the TypeScript parser sees them: strings and
 * template literals (a template counted whole, its substitutions included), not comments.
 */
export function luaInStrings(file: string, source: string, marks = REDIS_CALL): LuaInString[] {
  if (!marks.test(source)) return [];
  const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LuaInString[] = [];
  const lineOf = (at: number) => sourceFile.getLineAndCharacterOfPosition(at).line + 1;
  const visit = (node: TypeScript.Node): void => {
    const literal =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node);
    if (literal && marks.test(node.getText(sourceFile))) {
      const line = lineOf(node.getStart(sourceFile));
      found.push({ file, line, lines: lineOf(node.getEnd()) - line + 1 });
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** Every literal holding Lua in `root`'s Lua-free trees. */
export function luaInStringsUnder(root: string, marks = REDIS_CALL): LuaInString[] {
  return sourceFiles(root, LUA_FREE_TREES).flatMap((file) =>
    luaInStrings(file, readFileSync(join(root, file), 'utf8'), marks),
  );
}
