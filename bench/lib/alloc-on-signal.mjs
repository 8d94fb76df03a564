// Preloaded into a worker process by bench/model-step-cost.ts (`--alloc-prof <dir>`, execArgv --import …):
// SIGUSR2 starts counting the bytes the main thread's heap allocates (V8's GC profiler: the used heap before
// each collection less what the previous one left) and, with AGENTQ_HEAP_PROFILE=1, V8's sampling heap
// profiler with collected objects kept (=live: without them); a second SIGUSR2 stops both and writes
// $AGENTQ_ALLOC_PROFILE_DIR/<pid>-<n>.alloc.json ({allocatedBytes, gcs, gcUs by kind}) and <pid>-<n>.heapprofile (DevTools, speedscope).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import process from 'node:process';
import { GCProfiler, getHeapStatistics } from 'node:v8';

const dir = process.env.AGENTQ_ALLOC_PROFILE_DIR;
// '1': every sampled allocation; 'live': only those still held when the profile stops (what a step keeps).
const sampling = process.env.AGENTQ_HEAP_PROFILE === '1' || process.env.AGENTQ_HEAP_PROFILE === 'live';
const collected = process.env.AGENTQ_HEAP_PROFILE === '1';
const session = sampling ? new Session() : undefined;
session?.connect();
let profiler;
let startUsed = 0;
let written = 0;
process.on('SIGUSR2', () => {
  if (!profiler) {
    profiler = new GCProfiler();
    startUsed = getHeapStatistics().used_heap_size;
    profiler.start();
    session?.post('HeapProfiler.enable');
    session?.post('HeapProfiler.startSampling', {
      samplingInterval: Number(process.env.AGENTQ_HEAP_SAMPLE_BYTES ?? 16384),
      includeObjectsCollectedByMajorGC: collected,
      includeObjectsCollectedByMinorGC: collected,
    });
    return;
  }
  const endUsed = getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  profiler = undefined;
  let allocated = 0;
  let left = startUsed;
  /** GC time (µs) by kind (V8's names: Scavenge, MarkSweepCompact, …). */
  const gcUs = {};
  /** Over the scavenges: bytes left in the young generation after each, and bytes moved to the old one. */
  let survived = 0;
  let promoted = 0;
  const spaceUsed = (stats, name) =>
    stats.heapSpaceStatistics.find((space) => space.spaceName === name)?.spaceUsedSize ?? 0;
  for (const { gcType, cost, beforeGC, afterGC } of statistics) {
    allocated += beforeGC.heapStatistics.usedHeapSize - left;
    left = afterGC.heapStatistics.usedHeapSize;
    gcUs[gcType] = (gcUs[gcType] ?? 0) + cost;
    if (gcType !== 'Scavenge') continue;
    survived += spaceUsed(afterGC, 'new_space');
    promoted += spaceUsed(afterGC, 'old_space') - spaceUsed(beforeGC, 'old_space');
  }
  allocated += endUsed - left;
  const n = written++;
  writeFileSync(
    `${dir}/${process.pid}-${n}.alloc.json`,
    JSON.stringify({ allocatedBytes: allocated, gcs: statistics.length, gcUs, survived, promoted }),
  );
  session?.post('HeapProfiler.stopSampling', (error, result) => {
    if (!error) writeFileSync(`${dir}/${process.pid}-${n}.heapprofile`, JSON.stringify(result.profile));
  });
});
