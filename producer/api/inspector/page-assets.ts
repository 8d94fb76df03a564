/**
 * The pages' stylesheet and the run page's script, served by the API as files (`/assets/…`) so the
 * Content-Security-Policy can allow scripts and styles from 'self' only: no inline script or style
 * anywhere, so text that slipped into a page could not run even if it were not escaped.
 */
export const PAGE_ASSETS = {
  style: { path: '/assets/agentq.css', type: 'text/css; charset=utf-8' },
  runLive: { path: '/assets/run-live.js', type: 'text/javascript; charset=utf-8' },
} as const;

export const PAGE_STYLE = `
body { font-family: system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
header { background: #1d2330; color: #fff; padding: .6rem 1.2rem; display: flex; gap: 1.2rem; align-items: center; }
header a, header .link { color: #cfe0ff; text-decoration: none; }
header form { margin: 0; }
.link { background: none; border: 0; padding: 0; font: inherit; cursor: pointer; }
.spacer { flex: 1; }
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
.narrow { max-width: 26rem; }
.narrow input[type=password] { width: 100%; box-sizing: border-box; padding: .4rem; font-family: ui-monospace, monospace; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: .4rem 1rem; font-size: .9rem; }
.facts b { display: block; font-size: .75rem; color: #5b6474; font-weight: 500; }
pre { background: #f3f5f8; padding: .5rem; overflow: auto; max-height: 28rem; font-size: .8rem; margin: .3rem 0; white-space: pre-wrap; word-break: break-word; }
.msg { border-left: 4px solid #c5cdd8; padding: .3rem .7rem; margin: .5rem 0; background: #fff; }
.msg-assistant { border-color: #4a7fe0; } .msg-tool { border-color: #29a36a; } .msg-user { border-color: #d9962b; } .msg-system { border-color: #8a93a3; }
.msg .content { white-space: pre-wrap; }
.role { font-size: .75rem; text-transform: uppercase; color: #5b6474; letter-spacing: .04em; }
.actions form { display: inline-block; margin-right: .5rem; }
button { padding: .35rem .9rem; border-radius: 4px; border: 1px solid #9aa4b2; background: #fff; cursor: pointer; }
header button.link { padding: 0; border: 0; background: none; }
button.danger { border-color: #c0392b; color: #c0392b; }
.live { font-family: ui-monospace, monospace; white-space: pre-wrap; background: #0f1520; color: #d8f0ff; padding: .6rem; border-radius: 4px; min-height: 1.5rem; }
.muted { color: #6b7482; font-size: .85rem; }
.bar { display: block; width: 100%; height: 14px; background: #e4e7ec; border-radius: 7px; padding: 0; }
.legend-wait { color: #c9d1dc; } .legend-ok { color: #2f6fde; } .legend-retry { color: #d64545; } .legend-running { color: #f0a020; }
svg text { font-family: system-ui, sans-serif; }
.problem { color: #b00020; }
`;

/**
 * The run page's live part: tokens as they stream, and the sections re-rendered after each committed
 * event (the same windows of the run's steps and transcript, fetched with X-Agentq-Refresh, so a refresh leaves the session's notice to the page view). It reads the run from the data attributes of #run-config (escaped like any attribute), never
 * from text spliced into the script.
 */
export const RUN_LIVE_SCRIPT = `
(function () {
  var config = document.getElementById('run-config');
  if (!config) return;
  var runId = config.dataset.runId;
  var live = document.getElementById('live');
  var parts = {};
  function box(key, label) {
    if (!parts[key]) {
      var wrap = document.createElement('div');
      wrap.className = 'live-part';
      wrap.dataset.step = key;
      var title = document.createElement('div');
      title.className = 'muted';
      title.textContent = label;
      var text = document.createElement('span');
      text.className = 'live-text';
      wrap.appendChild(title);
      wrap.appendChild(text);
      live.appendChild(wrap);
      parts[key] = text;
    }
    return parts[key];
  }
  var refreshing = false, again = false;
  function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(location.pathname + location.search, { credentials: 'same-origin', headers: { 'x-agentq-refresh': 'sections' } }).then(function (response) { return response.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, 'text/html');
      var fresh = doc.getElementById('sections');
      var openState = document.getElementById('state') && document.getElementById('state').open;
      if (fresh) document.getElementById('sections').replaceWith(fresh);
      if (openState) document.getElementById('state').open = true;
    }).finally(function () { refreshing = false; if (again) { again = false; refresh(); } });
  }
  if (config.dataset.terminal === 'true') return;
  var after = document.getElementById('last-event').dataset.id;
  var source = new EventSource('/runs/' + encodeURIComponent(runId) + '/events?after=' + encodeURIComponent(after));
  function label(data) { return 's' + data.step + '.t' + data.task + ' ' + data.node + ' (attempt ' + data.attempt + ')'; }
  source.addEventListener('token-reset', function (event) {
    var data = JSON.parse(event.data);
    box('s' + data.step + '.t' + data.task, label(data)).textContent = '';
  });
  source.addEventListener('token', function (event) {
    var data = JSON.parse(event.data);
    box('s' + data.step + '.t' + data.task, label(data)).textContent += data.text;
  });
  ['step-start', 'step-end', 'step-retry', 'tool-call', 'tool-result', 'run-waiting', 'run-retry', 'run-resume', 'step-deferred', 'step-parked'].forEach(function (type) {
    source.addEventListener(type, refresh);
  });
  source.addEventListener('run-end', function () { source.close(); refresh(); });
})();
`;
