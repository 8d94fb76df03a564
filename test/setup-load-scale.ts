import { vi } from 'vitest';
import { loadScaledMs, suiteTimeouts } from './helpers/load-scale.js';

// Before each test file: vitest's test and hook limits stretched by the load at the time the file starts
// (load-scale.ts), so a test waiting on processes of a busy machine is not cut off at a quiet machine's
// limit. On a quiet machine the limits are vitest.config.ts's own.
const base = suiteTimeouts(process.env.AGENTQ_SUITE_SCALE === 'full');
vi.setConfig({ testTimeout: loadScaledMs(base.testTimeout), hookTimeout: loadScaledMs(base.hookTimeout) });
