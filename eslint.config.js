import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/**
 * The floors inside shared/ and worker/, from the ground up; docs/architecture.md prints the same table (a
 * unit test holds them equal). A room may import only the rooms below it in its tree, type imports
 * included; a room nested in another (`retrieval/sec-filings`) is a room of its own, above its parent's
 * other files. Files at a tree's root (`worker/start-worker.ts`) wire the rooms together and stand on all.
 */
export const floors = {
  shared: [
    'contracts',
    'ports',
    'llm',
    'config',
    'telemetry',
    'graph',
    'retrieval',
    'retrieval/sec-filings',
    'redis',
    'adapters',
    'bullmq',
    'store',
    'operations',
  ],
  worker: ['runtime', 'provider-batches', 'ingest', 'agents', 'engine', 'operations'],
};

/** One zone per room: it may import none of the rooms above it in its tree. */
function floorZones(tree, table) {
  return table.slice(0, -1).map((room, rank) => {
    const nested = table.filter((other) => other.startsWith(`${room}/`));
    // A room holding nested rooms is its files outside them (minimatch's extglob names the rest).
    const target =
      nested.length === 0
        ? `./${tree}/${room}`
        : [`./${tree}/${room}/*.*`, `./${tree}/${room}/!(${nested.map((n) => n.slice(room.length + 1)).join('|')})/**`];
    const above = table.slice(rank + 1);
    return {
      target,
      from: above.map((other) => `./${tree}/${other}`),
      message: `${tree}/${room} stands below ${above.join(', ')} (the floors in eslint.config.js): move what both need down`,
    };
  });
}

/**
 * The rooms of docs/architecture.md and the directions between them. A zone's `target` may not import
 * from its `from`; `except` lists the parts of `from` it may use.
 */
const rooms = [
  // The two sides meet only in shared/.
  {
    target: './producer',
    from: './worker',
    message: 'producer code may not import worker code: move what both need to shared/',
  },
  {
    target: './worker',
    from: './producer',
    message: 'worker code may not import producer code: move what both need to shared/',
  },
  {
    target: './shared',
    from: ['./producer', './worker', './bin'],
    message: 'shared/ is below both sides: it imports neither producer/ nor worker/',
  },
  // agentq/testing runs graphs as a worker would: it may use shared/ and worker/, and nothing the
  // product runs may depend on it.
  {
    target: './testing',
    from: ['./producer', './bin'],
    message: 'testing/ runs graphs in process: it may import shared/ and worker/, not producer/ or bin/',
  },
  {
    target: ['./producer', './worker', './shared', './bin'],
    from: './testing',
    message: 'testing/ is for tests: product code may not import it',
  },
  // Vendor adapters sit below everything but the contracts, ports, config and telemetry.
  {
    target: './shared/adapters',
    from: './shared',
    except: ['./adapters', './contracts', './ports', './config', './telemetry', './llm', './retrieval'],
    message:
      'an adapter implements a port: it may import shared/contracts, ports, config, telemetry and the pure retrieval and model tables, not the store, graphs or operations',
  },
  // The lowest floor: contracts import nothing of agentq's but each other.
  {
    target: './shared/contracts',
    from: './shared',
    except: ['./contracts'],
    message: 'shared/contracts is the lowest floor: it imports only other contracts',
  },
  ...Object.entries(floors).flatMap(([tree, table]) => floorZones(tree, table)),
  // Stricter than the floors: the engine stands above the agents but runs them only through the graph
  // model and the ports, so what both need lives in worker/runtime/ or shared/.
  {
    target: './worker/engine',
    from: './worker/agents',
    message: 'the engine runs agents through the graph model and ports: move what both need to worker/runtime/',
  },
];

/**
 * The BullMQ seam (shared/bullmq/README.md): only shared/bullmq/ may reach into BullMQ beyond its public
 * API. Elsewhere: no import of BullMQ's files by path, none of the exports that are BullMQ's own plumbing,
 * and no use of the Worker members BullMQ keeps private or protected (TakingWorker wraps them).
 */
const BULLMQ_SEAM = 'shared/bullmq/';
const bullmqInternals = {
  // Exported by 'bullmq' but BullMQ's own plumbing: key layouts, raw script replies, the main loop's queue.
  imports: ['QueueKeys', 'raw2NextJobData', 'AsyncFifoQueue', 'LockManager', 'RedisQueueBackend'],
  // Worker members that are private (mainLoop … _getNextJob) or protected (lockManager … moveToActive).
  members: [
    'mainLoop',
    'mainLoopQueue',
    '_getNextJob',
    'updateDelays',
    'retryIfFailed',
    'isRateLimited',
    'waitForRateLimit',
    'blockUntil',
    'lockManager',
    'handleCompleted',
    'handleFailed',
    'nextJobFromJobData',
    'moveToActive',
  ],
};
const seamMessage = `is a BullMQ internal: only ${BULLMQ_SEAM} may use it (add what you need to the seam, see its README.md)`;
const seamRules = {
  'no-restricted-imports': [
    'error',
    {
      paths: [{ name: 'bullmq', importNames: bullmqInternals.imports, message: `this export ${seamMessage}` }],
      patterns: [{ group: ['bullmq/dist/*', 'bullmq/src/*'], message: `BullMQ's files by path: ${seamMessage}` }],
    },
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: `MemberExpression[property.name=/^(${bullmqInternals.members.join('|')})$/]`,
      message: `this member of BullMQ's Worker ${seamMessage}`,
    },
    {
      selector: `MethodDefinition[key.name=/^(${bullmqInternals.members.join('|')})$/]`,
      message: `overriding this member of BullMQ's Worker ${seamMessage}`,
    },
    {
      selector: 'TSTypeReference[typeName.name=/^(WorkerInternals|LockManager)$/]',
      message: `a type naming BullMQ's Worker internals ${seamMessage}`,
    },
    {
      selector: 'Literal[value=/bullmq\\/dist\\//], TemplateElement[value.raw=/bullmq\\/dist\\//]',
      message: `a path into BullMQ's files ${seamMessage}`,
    },
  ],
};

/** The source trees held to the size caps (tests are not: a describe callback is one long function). */
const SOURCES = ['index.ts', 'bin/**/*.ts', 'shared/**/*.{ts,tsx}', 'worker/**/*.{ts,tsx}', 'producer/**/*.{ts,tsx}'];
const MAX_FUNCTION_LINES = 120;

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.agentq/**',
      'test/artifacts/**',
      'bench/results/**',
      '.readme-snippets-*/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      // Without .ts here no-cycle does not follow imports into TypeScript files (and finds no cycle).
      'import-x/extensions': ['.ts', '.tsx', '.js'],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: rooms }],
    },
  },
  {
    // No source file over 400 lines (counted as they stand), no function over MAX_FUNCTION_LINES lines of code.
    files: SOURCES,
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['**/*.ts'],
    ignores: [`${BULLMQ_SEAM}**`],
    rules: seamRules,
  },
  {
    // The pages escape every value by construction (Preact's renderer); raw HTML would undo that.
    files: ['**/*.tsx'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'JSXAttribute[name.name="dangerouslySetInnerHTML"]',
          message: 'pages render escaped values only: build the markup as elements instead of raw HTML',
        },
      ],
    },
  },
);
