// Preloaded into a worker process by bench/batch-floor-compare.ts (NODE_OPTIONS=--import …): SIGUSR2
// starts the V8 CPU profiler on the main thread, a second SIGUSR2 stops it and writes
// $AGENTQ_CPU_PROFILE_DIR/<pid>-<n>.cpuprofile (open it in Chrome DevTools or speedscope).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import process from 'node:process';

const session = new Session();
session.connect();
let running = false;
let written = 0;
process.on('SIGUSR2', () => {
  if (!running) {
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval: 500 });
    session.post('Profiler.start');
    running = true;
    return;
  }
  running = false;
  session.post('Profiler.stop', (error, result) => {
    if (error) return;
    writeFileSync(
      `${process.env.AGENTQ_CPU_PROFILE_DIR}/${process.pid}-${written++}.cpuprofile`,
      JSON.stringify(result.profile),
    );
  });
});
