import { describe, expect, it } from 'vitest';
import { runPage, type RunPageData } from '../../producer/api/inspector/run-page.js';
import { runPageData } from '../helpers/run-page-data.js';

/** The run page's family links: the parent of a child run, and a page of a parent's children with the next page's link. */
describe('run page: parent and child runs', () => {
  const page = (fields: Record<string, string>, children: RunPageData['children'] = null) =>
    runPage({ ...runPageData({ id: 'run_child', ...fields }), children });

  it('links a child run to its parent, and shows no parent for a run without one', () => {
    expect(page({ parentRunId: 'run_parent', parentStep: 's0.t0' })).toContain(
      '<a id="parent-run" href="/runs/run_parent"><code>run_parent</code></a> (step s0.t0)',
    );
    expect(page({})).not.toContain('parent-run');
  });

  it('lists a page of children, each linked with its status, and links the next page by its cursor', () => {
    const html = page(
      {},
      {
        children: [
          {
            runId: 'run_a',
            graph: 'child-double',
            step: 's0.t0',
            wait: true,
            createdAt: '2023-11-14T22:13:20.000Z',
            status: 'completed',
          },
          {
            runId: 'run_b',
            graph: 'child-double',
            step: 's0.t0',
            wait: false,
            createdAt: '2023-11-14T22:13:20.000Z',
            status: null,
          },
        ],
        total: 7,
        nextCursor: '12',
      },
    );
    expect(html).toContain('<a class="child-run" href="/runs/run_a"><code>run_a</code></a>');
    expect(html).toContain('<a class="child-run" href="/runs/run_b"><code>run_b</code></a>');
    expect(html).toContain('<td>completed</td>');
    expect(html).toContain('<td>missing</td>');
    expect(html).toContain('2 of 7 shown.');
    expect(html).toContain('<a id="more-children" href="/runs/run_child?children=12">');
    expect(page({})).not.toContain('Child runs');
  });
});
