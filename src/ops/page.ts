import type { KeyFigures } from './live.ts';
import { formatLag } from './freshness.ts';
import type { PushModelLine, Reject, StreamStatus } from './status.ts';
import type { SchemaChangeRow } from '../warehouse/schema-changes.ts';
import { progressBar } from './progress-view.ts';

export const esc = (v: unknown): string =>
  String(v ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{display:flex;align-items:center;gap:1.5em;padding:.8em 2em;background:#1d2330;color:#fff}
header h1{font-size:18px;margin:0}header a{color:#cfe0ff}header nav{display:flex;gap:1em;flex:1}
main{padding:1em 2em 3em}h2{font-size:16px;margin:1.6em 0 .5em}
table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0001;width:100%}
td,th{padding:5px 10px;border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}
th{background:#eef0f4;font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.03em}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}
.fresh{background:#d9f5e1;color:#106b2f}.late{background:#fff1c2;color:#7a5a00}.stale{background:#fddcdc;color:#9b1c1c}.off{background:#e5e7eb;color:#374151}
.failed{color:#9b1c1c;font-weight:600}.ok{color:#106b2f}.running{color:#1d4ed8}
.error{color:#9b1c1c;max-width:32em;word-break:break-word}
.muted{color:#6b7280}.flash{background:#e0ecff;padding:.6em 1em;border-radius:4px}
pre{margin:0;white-space:pre-wrap;word-break:break-all;max-width:60em;font-size:12px}
form.inline{display:inline;margin:0}button{font:inherit;font-size:12px;padding:2px 8px;cursor:pointer}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{background:#fff;padding:.6em 1em;box-shadow:0 1px 2px #0001;min-width:8em}
.card b{display:block;font-size:20px}
tr.failing td:nth-child(2){color:#9b1c1c;font-weight:600}tr.stale td:nth-child(2){color:#9b1c1c}tr.late td:nth-child(2){color:#7a5a00}tr.fresh td:nth-child(2){color:#106b2f}`;

export interface Viewer {
  signedIn: boolean;
  /** Sign-in is possible (a dashboard token or an identity provider is set). */
  canSignIn: boolean;
  /** Signed in: who, and with what role (../roles.ts says what each may do). */
  actor?: string;
  role?: 'viewer' | 'operator' | 'admin';
  /** Sign-in goes through the organization's identity provider. */
  oidc?: boolean;
}

const RANK = { viewer: 0, operator: 1, admin: 2 } as const;
/** Whether the viewer holds at least the role (roles.ts checks the same on the server). */
export const holds = (viewer: Viewer, role: keyof typeof RANK): boolean =>
  viewer.role !== undefined && RANK[viewer.role] >= RANK[role];

/** Whether this viewer may see record contents (rejects' raw payloads, the service's messages about pushed records). */
export type RecordView = { shown: true } | { shown: false; why: string };

export function layout(title: string, viewer: Viewer, body: string, refreshS?: number): string {
  const who = viewer.signedIn
    ? `<span class="muted" id="signed-in">${esc(viewer.actor)} (${esc(viewer.role)})</span> <form class="inline" method="post" action="/signout"><button>sign out</button></form>`
    : viewer.canSignIn
      ? '<a href="/signin">sign in</a>'
      : '<span class="muted">read-only</span>';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · workforce-sync</title>
${refreshS ? `<meta http-equiv="refresh" content="${refreshS}">` : ''}<style>${STYLE}</style></head><body>
<header><h1>workforce-sync</h1><nav><a href="/">status</a><a href="/rejects">rejects</a><a href="/companies">companies</a><a href="/queues">queues</a><a href="/metrics">metrics</a></nav>${who}</header>
<main>${body}</main></body></html>`;
}

export const when = (d: Date | null) =>
  d
    ? `<span title="${esc(d.toISOString())}">${esc(d.toISOString().replace('T', ' ').slice(0, 19))}</span>`
    : '<span class="muted">-</span>';

function lastRun(s: StreamStatus): string {
  if (s.running) {
    const bar = s.progress ? `<div>${progressBar(s.progress, `${s.company} ${s.stream} progress`)}</div>` : '';
    return `<span class="running">running</span> since ${when(s.lastStartedAt)}${bar}`;
  }
  if (!s.lastOutcome) return '<span class="muted">never</span>';
  return `<span class="${esc(s.lastOutcome)}">${esc(s.lastOutcome)}</span> ${when(s.lastFinishedAt)}`;
}

export function streamRow(s: StreamStatus, viewer: Viewer, canRun: boolean): string {
  const rejects = s.rejectsKept
    ? `<a href="/rejects?company=${encodeURIComponent(s.company)}&amp;stream=${encodeURIComponent(s.stream)}">${s.rejectsKept}</a>`
    : '0';
  const run =
    canRun && holds(viewer, 'operator') && s.freshness !== 'off'
      ? `<form class="inline" method="post" action="/actions/run"><input type="hidden" name="company" value="${esc(s.company)}"><input type="hidden" name="stream" value="${esc(s.stream)}"><button>run now</button></form>`
      : '';
  return `<tr data-company="${esc(s.company)}" data-stream="${esc(s.stream)}" data-freshness="${s.freshness}">
<td>${esc(s.stream)}</td><td><span class="badge ${s.freshness}">${s.freshness}</span></td>
<td class="n">${esc(formatLag(s.lagSeconds === null ? null : s.lagSeconds * 1000))}</td>
<td>${lastRun(s)}</td><td>${when(s.lastOkAt)}</td><td class="n">${s.rows}</td><td class="n">${rejects}</td>
<td class="error">${esc(s.lastOutcome === 'failed' ? s.error : '')}</td>
<td>${when(s.nextRunAt)}<div class="muted">${esc(s.job ?? '')} ${esc(s.cron ?? '')}</div></td><td>${run}</td></tr>`;
}

export function keyRows(keys: KeyFigures[], now: number): string {
  if (keys.length === 0) return '<p class="muted">No request has been sent by this process yet.</p>';
  const rows = keys.map((k) => {
    const used = k.limit !== undefined && k.remaining !== undefined ? `${k.limit - k.remaining} / ${k.limit}` : '-';
    const reset = k.resetAtMs !== undefined && k.resetAtMs > now ? `${Math.ceil((k.resetAtMs - now) / 1000)} s` : '-';
    return `<tr data-company="${esc(k.company)}"><td>${esc(k.company)}</td><td class="n">${used}</td><td class="n">${reset}</td><td class="n">${k.requests}</td><td class="n ${k.rateLimited ? 'failed' : ''}">${k.rateLimited}</td></tr>`;
  });
  return `<table id="keys"><thead><tr><th>company (API key)</th><th>budget used in period</th><th>period resets in</th><th>requests</th><th>429s</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Fields the service added that no column maps, and those that stopped coming (schema_changes). */
export function schemaChangesTable(rows: readonly SchemaChangeRow[]): string {
  if (rows.length === 0)
    return '<h2>schema changes</h2><p id="schema-changes" class="muted">The service has sent no field that no column maps.</p>';
  return `<h2>schema changes</h2><p class="muted">Fields the service sends that no column maps: kept in each row's <code>_extra</code> (read one with <code>_extra-&gt;&gt;'Name'</code>).</p>
<table id="schema-changes"><thead><tr><th>company</th><th>stream</th><th>field</th><th>type</th><th>example (masked)</th><th>first seen</th><th>last seen</th><th>records</th><th>gone</th></tr></thead><tbody>${rows
    .map(
      (r) =>
        `<tr data-field="${esc(r.field_path)}"><td>${esc(r.company_key)}</td><td>${esc(r.stream)}</td><td><code>${esc(r.field_path)}</code></td><td>${esc(r.json_type)}</td><td><code>${esc(JSON.stringify(r.example))}</code></td><td>${when(r.field_first_seen_at)}</td><td>${when(r.field_last_seen_at)}</td><td class="n">${r.records_seen}</td><td class="${r.gone_at ? 'failed' : ''}">${r.gone_at ? when(r.gone_at) : '-'}</td></tr>`,
    )
    .join('')}</tbody></table>`;
}

/** A run's error may quote a value of the query's rows: shown only with record contents, as the service's messages are. */
export function modelTable(models: readonly PushModelLine[], viewer: Viewer, records: RecordView): string {
  const button = (name: string, verb: string) =>
    `<form class="inline" method="post" action="/actions/push-models/${encodeURIComponent(name)}/${verb}"><button>${verb}</button></form>`;
  const rows = models.map((m) => {
    const r = m.lastRun;
    const counts = r
      ? [r.rowsRead, r.unchanged, r.changed, r.queued, r.refused].map((n) => `<td>${n}</td>`).join('')
      : '<td></td>'.repeat(5);
    const outcome = r
      ? `<td class="${r.outcome === 'ok' ? 'ok' : 'failed'}">${esc(r.outcome ?? 'running')}${r.overCap ? ' (over the cap)' : ''}</td>`
      : '<td class="muted">never run</td>';
    const acts = [
      ...(holds(viewer, 'operator') ? [button(m.name, 'run'), button(m.name, m.paused ? 'resume' : 'pause')] : []),
      ...(holds(viewer, 'admin') ? [button(m.name, 'remove')] : []),
    ].join('');
    return `<tr data-model="${esc(m.name)}"><td>${esc(m.name)}</td><td>${esc(m.company)}</td><td>${esc(m.kind)}</td><td>${esc(m.cron ?? 'by hand')}${m.paused ? ' <span class="muted">paused</span>' : ''}</td><td>${m.maxChanges}</td><td>${r ? when(r.startedAt) : ''}</td>${outcome}${counts}<td class="error">${r?.error ? (records.shown || r.overCap ? esc(r.error) : '<span class="muted">hidden</span>') : ''}</td><td>${acts}</td></tr>`;
  });
  return `<h2>push models</h2><table id="push-models"><thead><tr><th>model</th><th>company</th><th>kind</th><th>cron</th><th>cap</th><th>last run</th><th>outcome</th><th>rows read</th><th>unchanged</th><th>changed</th><th>queued</th><th>refused</th><th>error</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

export function rejectsPage(
  rejects: Reject[],
  filter: { company?: string; stream?: string },
  viewer: Viewer,
  records: RecordView,
  next?: number,
): string {
  const payload = (r: Reject) => (records.shown ? `<td><pre>${esc(JSON.stringify(r.raw, null, 2))}</pre></td>` : '');
  const rows = rejects
    .map(
      (r) =>
        `<tr class="reject" data-id="${r.id}"><td>${when(r.seenAt)}</td><td>${esc(r.company)}</td><td>${esc(r.stream)}</td><td class="error">${esc(r.reason)}</td>${payload(r)}</tr>`,
    )
    .join('');
  const scope = [filter.company && `company ${filter.company}`, filter.stream && `stream ${filter.stream}`]
    .filter(Boolean)
    .join(', ');
  const q = (extra: Record<string, string>) =>
    new URLSearchParams({
      ...(filter.company ? { company: filter.company } : {}),
      ...(filter.stream ? { stream: filter.stream } : {}),
      ...extra,
    }).toString();
  return layout(
    'rejects',
    viewer,
    `<h2>Rejected records${scope ? ` of ${esc(scope)}` : ''}, newest first</h2>
<p class="muted">Records that failed their schema: the rest of their page was written. Each keeps the service's raw payload and the reason.</p>
${records.shown ? '' : `<p class="flash" id="payloads-hidden">${esc(records.why)}</p>`}
${rows ? `<table id="rejects"><thead><tr><th>seen</th><th>company</th><th>stream</th><th>reason</th>${records.shown ? '<th>raw payload</th>' : ''}</tr></thead><tbody>${rows}</tbody></table>` : '<p>No rejected records.</p>'}
${next ? `<p><a href="/rejects?${esc(q({ before: String(next) }))}">older</a></p>` : ''}`,
  );
}

export function signInPage(viewer: Viewer, error?: string): string {
  return layout(
    'sign in',
    viewer,
    viewer.oidc
      ? `<h2>Sign in</h2>${error ? `<p class="failed">${esc(error)}</p>` : ''}<p><a href="/signin">Sign in with your organization's account</a>.</p>`
      : viewer.canSignIn
        ? `<h2>Sign in</h2>${error ? `<p class="failed">${esc(error)}</p>` : ''}<form method="post" action="/signin"><label>dashboard token <input type="password" name="token" autofocus></label> <button>sign in</button></form>
<p class="muted">Signed in, you can run a stream now, retry pushes and act on queued jobs.</p>`
        : '<p>The dashboard is read-only: set WFS_DASHBOARD_TOKEN to allow signing in.</p>',
  );
}

export interface InProcessRun {
  company: string;
  stream: string;
  startedAt: Date;
  finishedAt: Date | null;
  outcome: string | null;
  rows: number;
  requests: number;
  error: string | null;
}

export function inProcessPage(runs: InProcessRun[], viewer: Viewer): string {
  const rows = runs
    .map(
      (r) =>
        `<tr><td>${esc(r.company)}</td><td>${esc(r.stream)}</td><td>${when(r.startedAt)}</td><td>${when(r.finishedAt)}</td><td class="${esc(r.outcome ?? 'running')}">${esc(r.outcome ?? 'running')}</td><td class="n">${r.rows}</td><td class="n">${r.requests}</td><td class="error">${esc(r.error)}</td></tr>`,
    )
    .join('');
  return layout(
    'queues',
    viewer,
    `<h2>Jobs run in this process</h2><p>There is no REDIS_URL, so there is no queue: jobs run in-process on their schedule. These are the latest stream runs.</p>
<table id="runs"><thead><tr><th>company</th><th>stream</th><th>started</th><th>finished</th><th>outcome</th><th>rows</th><th>requests</th><th>error</th></tr></thead><tbody>${rows}</tbody></table>`,
    10,
  );
}
