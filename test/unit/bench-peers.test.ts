import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { renderBenchCharts } from '../../bench/lib/bench-charts.js';
import { processTreeCpuUs } from '../../bench/peers/cpu.js';
import { roundOrder } from '../../bench/peers/lineup.js';
import { callsAgainAfterAnswer, type ModelCall } from '../../bench/peers/model-calls.js';
import { promptOf, stepOfPrompt, stepRequest } from '../../bench/peers/peer-steps.js';
import { peersFigures, peersTables } from '../../bench/peers/peers-report.js';

const call = (step: string, receivedAt: number, answeredAt?: number): ModelCall => ({
  step,
  receivedAt,
  answeredAt,
  outcome: answeredAt === undefined ? 'aborted' : 'answered',
});

describe('the peers bench', () => {
  it('knows the (run, step) of every prompt the systems send', () => {
    const body = { messages: stepRequest('abc-12', 6).messages as { content?: unknown }[] };
    expect(stepOfPrompt(promptOf(body))).toBe('abc-12 7');
  });

  it('counts a call made again after its answer arrived, not one whose answer was cut off by the kill', () => {
    const killedAt = 1000;
    const calls = [
      call('r1 1', 100, 300), // answered long before the kill …
      call('r1 1', 1500, 1700), // … and asked again by the new worker: paid twice
      call('r2 1', 900), // cut off by the kill (never answered) …
      call('r2 1', 1500, 1700), // … asked again: nothing was paid twice
      call('r3 1', 900, 1100), // the answer went out after the kill, to a dead process …
      call('r3 1', 1500, 1700), // … so asking again pays once
      call('r4 1', 950, 990), // answered 10 ms before the kill (still in the socket, say) …
      call('r4 1', 1500, 1700), // … asked again
    ];
    expect(callsAgainAfterAnswer(calls, killedAt)).toBe(2);
    // Only answers sent at least 500 ms before the kill: r1's, not r4's.
    expect(callsAgainAfterAnswer(calls, killedAt, 500)).toBe(1);
  });

  it('takes medians per system, sums the calls paid twice, and divides agentq by each peer round by round', () => {
    const figures = peersFigures({
      agentq: [
        { model0_steps_per_s_r100: 100, crash_again_after_answer: 0, crash_kill_to_done_s: 2 },
        { model0_steps_per_s_r100: 300, crash_again_after_answer: 1 },
        { model0_steps_per_s_r100: 200, crash_again_after_answer: 0 },
      ],
      restate: [
        { model0_steps_per_s_r100: 50, crash_again_after_answer: 2 },
        { model0_steps_per_s_r100: 300, crash_again_after_answer: 3 },
        { model0_steps_per_s_r100: 400, crash_again_after_answer: 0 },
      ],
    });
    expect(figures.agentq_model0_steps_per_s_r100).toBe(200);
    expect(figures.restate_model0_steps_per_s_r100).toBe(300);
    expect(figures.agentq_crash_again_after_answer).toBe(1);
    expect(figures.restate_crash_again_after_answer).toBe(5);
    // Round ratios 2, 1 and 0.5: their median, not 200 ÷ 300.
    expect(figures.agentq_vs_restate_model0_steps_per_s_r100).toBe(1);
    expect(figures.restate_rounds).toBe(3);
    const tables = peersTables(figures, ['agentq', 'restate']);
    expect(tables).toContain('| 10 model steps, 0 ms model: r100 steps/s | 200 | 300 |');
    expect(tables).toContain('| model0_steps_per_s_r100 | 1.00 |');
    // A figure one system did not measure is a dash, never a number; a row none measured (a workload
    // left out with --workloads) is left out.
    expect(tables).toContain('| kill -9: kill to all done, s | 2.00 | — |');
    expect(tables).not.toContain('10 no-op steps: r100 steps/s');
    expect(tables).not.toContain('noop_steps_per_s_r100');
  });

  it('sets another build of agentq beside this one: after ÷ before for every figure, and each build ÷ peer', () => {
    const figures = peersFigures({
      agentq: [
        { noop_steps_per_s_r100: 1200, crash_worker_ready_s: 1 },
        { noop_steps_per_s_r100: 900, crash_worker_ready_s: 0.5 },
        { noop_steps_per_s_r100: 1000, crash_worker_ready_s: 1 },
      ],
      'agentq@abc1234': [
        { noop_steps_per_s_r100: 1000, crash_worker_ready_s: 4 },
        { noop_steps_per_s_r100: 1000, crash_worker_ready_s: 2 },
        { noop_steps_per_s_r100: 800, crash_worker_ready_s: 2 },
      ],
      langgraph: [
        { noop_steps_per_s_r100: 200, crash_worker_ready_s: 2 },
        { noop_steps_per_s_r100: 250, crash_worker_ready_s: 2 },
        { noop_steps_per_s_r100: 200, crash_worker_ready_s: 2 },
      ],
    });
    // After ÷ before, round by round (1.2, 0.9, 1.25 → 1.2; 0.25, 0.25, 0.5 → 0.25), not the ratio of
    // the medians (1 and 0.5).
    expect(figures['agentq_vs_agentq@abc1234_noop_steps_per_s_r100']).toBeCloseTo(1.2);
    expect(figures['agentq_vs_agentq@abc1234_crash_worker_ready_s']).toBe(0.25);
    // The lead over LangGraph after (6, 3.6, 5 → 5) and before (5, 4, 4 → 4), in the same rounds.
    expect(figures.agentq_vs_langgraph_noop_steps_per_s_r100).toBe(5);
    expect(figures['agentq@abc1234_vs_langgraph_noop_steps_per_s_r100']).toBe(4);
    // A peer is never divided by a build of agentq.
    expect(figures['langgraph_vs_agentq@abc1234_noop_steps_per_s_r100']).toBeUndefined();

    const tables = peersTables(figures, ['agentq', 'agentq@abc1234', 'langgraph']);
    expect(tables).toContain('|  | agentq | agentq@abc1234 | agentq ÷ agentq@abc1234 | langgraph |');
    expect(tables).toContain('| 10 no-op steps: r100 steps/s | 1,000 | 1,000 | 1.20 | 200 |');
    expect(tables).toContain('| kill -9: new worker start → first step taken, s | 1.00 | 2.00 | 0.25 | 2.00 |');
    expect(tables).toContain('| rounds | 3 | 3 |  | 3 |');
    expect(tables).toContain('| agentq ÷ peer, same rounds | langgraph |');
    expect(tables).toContain('| agentq@abc1234 ÷ peer, same rounds | langgraph |');
    expect(tables).toMatch(/\| agentq@abc1234 ÷ peer[^]*\| noop_steps_per_s_r100 \| 4\.00 \|/);
  });

  it('lets the builds of agentq take turns at the front of the rounds, the peers after them in order', () => {
    const agentqs = [
      { name: 'agentq', system: 'agentq' as const },
      { name: 'agentq@abc', system: 'agentq' as const, root: '/before' },
    ];
    const peers = [
      { name: 'restate', system: 'restate' as const },
      { name: 'chain', system: 'chain' as const },
    ];
    const names = (index: number) => roundOrder(index, agentqs, peers).map((entrant) => entrant.name);
    expect(names(0)).toEqual(['agentq', 'agentq@abc', 'restate', 'chain']);
    expect(names(1)).toEqual(['agentq@abc', 'agentq', 'restate', 'chain']);
    expect(names(2)).toEqual(names(0));
    expect(roundOrder(1, [], peers).map((entrant) => entrant.name)).toEqual(['restate', 'chain']);
  });

  it('draws steps/s and CPU per step of the systems that ran, none for a skipped one', () => {
    const charts = renderBenchCharts([
      {
        measuredWith: 'npm run bench:peers',
        figures: {
          agentq_rounds: 3,
          agentq_model0_steps_per_s_r100: 1500,
          agentq_model0_cpu_us_per_step_r100: 2600,
          chain_rounds: 3,
          chain_model0_steps_per_s_r100: 2000,
          chain_model0_cpu_us_per_step_r100: 1600,
        },
      },
    ]);
    expect(charts.map((chart) => chart.file)).toEqual(['peers-steps-per-second.svg', 'peers-cpu-per-step.svg']);
    const bars = [...charts[0]!.svg.matchAll(/<rect data-series="([^"]*)" data-value="([^"]*)"/g)].map(
      ([, series, value]) => [series, Number(value)],
    );
    expect(bars).toEqual([
      ['agentq', 1500],
      ['plain BullMQ chain', 2000],
    ]);
    expect(charts[0]!.svg).not.toContain('Restate');
  });

  // Skipped (the runner reports it) off Linux: the meter reads process CPU from /proc, which only Linux has.
  it.skipIf(process.platform !== 'linux')(
    'counts the CPU of a process tree, a child that already exited included (Linux /proc)',
    async () => {
      // A shell whose child burns 0.3 s of CPU (its own count, whatever the machine's load) and exits,
      // reaped by the shell, before the second reading.
      const burn = 'while (process.cpuUsage().user + process.cpuUsage().system < 300000);';
      const shell = spawn('sh', ['-c', `node -e "${burn}"; echo done; sleep 5`], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const before = processTreeCpuUs([shell.pid!]);
      await new Promise((resolve) => shell.stdout.once('data', resolve));
      const after = processTreeCpuUs([shell.pid!]);
      shell.kill('SIGKILL');
      expect(after - before).toBeGreaterThanOrEqual(200_000);
    },
  );
});
