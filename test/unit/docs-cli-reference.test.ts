import { describe, expect, it } from 'vitest';
import { createAgentqProgram } from '../../bin/agentq-program.js';
import { renderCliReference } from '../../scripts/cli-reference.js';
import { readDoc } from '../helpers/doc-pages.js';

describe('docs/reference/cli.md', () => {
  it('is what the commands’ own help renders (run `npm run docs:cli` after changing a command)', async () => {
    const noop = () => undefined;
    const program = await createAgentqProgram({ out: noop, err: noop, setExitCode: noop });
    expect(readDoc('docs/reference/cli.md')).toBe(renderCliReference(program));
  });
});
