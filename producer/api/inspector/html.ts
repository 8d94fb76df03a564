/** Text made safe for HTML element content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** JSON for a `<script>` block: `<` escaped so a value cannot close the script. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** Milliseconds as a short human duration: 850 ms, 4.2 s, 3 min 5 s. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatCost(usd: number): string {
  return usd === 0 ? '$0' : usd < 0.01 ? `$${usd.toFixed(5)}` : `$${usd.toFixed(3)}`;
}

const STYLE = `
  body { font-family: system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
  header { background: #1d2330; color: #fff; padding: .6rem 1.2rem; display: flex; gap: 1.2rem; align-items: center; }
  header a { color: #cfe0ff; text-decoration: none; }
  main { padding: 1rem 1.2rem; max-width: 1300px; }
  h1 { font-size: 1.25rem; margin: .4rem 0 .8rem; word-break: break-all; }
  h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
  table { border-collapse: collapse; background: #fff; width: 100%; font-size: .9rem; }
  th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #e4e7ec; vertical-align: top; }
  th { background: #eef1f5; font-weight: 600; }
  .status { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .8rem; background: #dde3ea; }
  .status-completed { background: #d3f2dc; } .status-failed { background: #ffd8d6; } .status-cancelled { background: #eadcff; }
  .status-running, .status-cancelling { background: #d6e8ff; } .status-waiting { background: #fff1c2; }
  .card { background: #fff; border: 1px solid #e4e7ec; border-radius: 6px; padding: .8rem 1rem; margin-bottom: .8rem; }
  .facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: .4rem 1rem; font-size: .9rem; }
  .facts b { display: block; font-size: .75rem; color: #5b6474; font-weight: 500; }
  pre { background: #f3f5f8; padding: .5rem; overflow: auto; max-height: 28rem; font-size: .8rem; margin: .3rem 0; white-space: pre-wrap; word-break: break-word; }
  .msg { border-left: 4px solid #c5cdd8; padding: .3rem .7rem; margin: .5rem 0; background: #fff; }
  .msg-assistant { border-color: #4a7fe0; } .msg-tool { border-color: #29a36a; } .msg-user { border-color: #d9962b; } .msg-system { border-color: #8a93a3; }
  .role { font-size: .75rem; text-transform: uppercase; color: #5b6474; letter-spacing: .04em; }
  .actions form { display: inline-block; margin-right: .5rem; }
  button { padding: .35rem .9rem; border-radius: 4px; border: 1px solid #9aa4b2; background: #fff; cursor: pointer; }
  button.danger { border-color: #c0392b; color: #c0392b; }
  .live { font-family: ui-monospace, monospace; white-space: pre-wrap; background: #0f1520; color: #d8f0ff; padding: .6rem; border-radius: 4px; min-height: 1.5rem; }
  .muted { color: #6b7482; font-size: .85rem; }
  .bar { height: 14px; background: #e4e7ec; border-radius: 7px; overflow: hidden; display: flex; }
  .bar span { display: block; height: 100%; }
  svg text { font-family: system-ui, sans-serif; }
  .problem { color: #b00020; }
`;

/** The inspector's page frame: nav, styles, the page's content. */
export function page({ title, body, script = '' }: { title: string; body: string; script?: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · agentq</title>
<style>${STYLE}</style>
</head>
<body>
<header><strong>agentq</strong><a href="/runs">Runs</a><a href="/admin/queues">Bull Board</a><a href="/docs">API docs</a><span style="flex:1"></span><a href="/runs/logout">Sign out</a></header>
<main>
${body}
</main>
${script ? `<script>${script}</script>` : ''}
</body>
</html>
`;
}
