/**
 * `npm run docs:cli`: writes docs/reference/cli.md from the commands' own help. Run it after changing a
 * command; the docs tests fail while the page is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createAgentqProgram } from '../bin/agentq-program.js';
import { renderCliReference } from './cli-reference.js';

const page = fileURLToPath(new URL('../docs/reference/cli.md', import.meta.url));
const noop = () => undefined;
writeFileSync(page, renderCliReference(await createAgentqProgram({ out: noop, err: noop, setExitCode: noop })));
process.stderr.write(`wrote ${page}\n`);
