import { escapeHtml, page } from './html.js';

/** The inspector's sign-in: any API key (its tenant's runs; an admin key sees all). */
export function inspectorLoginPage({ next, problem }: { next: string; problem?: string }): string {
  return page({
    title: 'Sign in',
    body: `<form class="card" method="post" action="/runs/login" style="max-width:26rem">
  <h1>Run inspector</h1>
  ${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
  <label for="key">API key</label><br>
  <input id="key" name="key" type="password" autocomplete="current-password" required autofocus style="width:100%">
  <input type="hidden" name="next" value="${escapeHtml(next)}">
  <p><button type="submit">Sign in</button></p>
  <p class="muted">Your key's tenant's runs and batches; an admin key sees every tenant. Scripts can send Authorization: Bearer instead.</p>
</form>`,
  });
}
