import { formatLag } from './freshness.ts';
import { COMPANY_STATES, STATE_FILTERS, type CompanySummary, type Overview, type StateFilter } from './overview.ts';
import { esc, holds, layout, modelTable, schemaChangesTable, when, type RecordView, type Viewer } from './page.ts';
import { formatEta } from './progress-view.ts';
import type { PushModelLine, PushSummary } from './status.ts';
import type { SchemaChangeRow } from '../warehouse/schema-changes.ts';

/**
 * The overview: one compact row per company, trouble first, with search and a state filter as a plain GET form.
 * Rows carry no per-stream detail (that is the company's page), so a thousand companies stay a small page.
 */

export interface OverviewPageInput {
  overview: Overview;
  /** The companies this page shows (filtered and cut to a page), and the filter that chose them. */
  shown: CompanySummary[];
  matched: number;
  filter: { search?: string; state?: StateFilter };
  page: number;
  pageSize: number;
  /** How long the oldest queued run has waited (null: nothing waits, or no queue). */
  scheduleDelaySeconds?: number | null;
  push: PushSummary;
  retryable?: { id: number; company: string; kind: string; status: string; error: string | null; updatedAt: Date }[];
  /** Push models and their latest runs, when push is configured. */
  models?: PushModelLine[];
  /** The latest fields the service added or stopped sending, across companies (each company's page has its own). */
  schemaChanges: readonly SchemaChangeRow[];
  viewer: Viewer;
  records: RecordView;
  flash?: string;
  now: number;
}

const pct = (f: number) => `${Math.round(f * 100)}%`;

function worst(c: CompanySummary): string {
  if (c.failing.length)
    return `${esc(c.failing.slice(0, 2).join(', '))}${c.failing.length > 2 ? ` +${c.failing.length - 2}` : ''} failed`;
  if (c.worstFreshness === 'fresh' || !c.worstStream) return '';
  return `${esc(c.worstStream)} ${esc(formatLag(c.worstLagSeconds === null ? null : c.worstLagSeconds * 1000))}`;
}

/** The streams the company turned off, the first two by name. */
function off(c: CompanySummary): string {
  const n = c.streamsOff.length;
  return n ? `${esc(c.streamsOff.slice(0, 2).join(', '))}${n > 2 ? ` +${n - 2}` : ''}` : '';
}

function backfill(c: CompanySummary): string {
  const p = c.progress;
  if (!p) return '';
  const share = p.fraction === null ? `${p.streams} running` : pct(p.fraction);
  return p.etaSeconds === null ? share : `${share}, ${esc(formatEta(p.etaSeconds))} left`;
}

/** A row stays short: its cells are plain text, the state's colour comes from the row's class. */
function companyRow(c: CompanySummary): string {
  const key = esc(c.company);
  const href = `/companies/${encodeURIComponent(c.company)}`;
  const rejects = c.rejectsOpen
    ? `<a href="/rejects?company=${encodeURIComponent(c.company)}">${c.rejectsOpen}</a>`
    : '0';
  const budget = c.budgetUsed === null ? c.requestsLastHour : pct(c.budgetUsed);
  return `<tr data-company="${key}" class="${c.state}"><td><a href="${href}">${key}</a></td><td>${c.state}</td><td>${worst(c)}</td><td class="n">${rejects}</td><td class="n">${budget}</td><td>${backfill(c)}</td><td>${off(c)}</td></tr>\n`;
}

function filterForm(f: OverviewPageInput['filter']): string {
  const options = ['', ...STATE_FILTERS]
    .map((s) => `<option value="${s}"${f.state === s ? ' selected' : ''}>${s || 'any state'}</option>`)
    .join('');
  return `<form method="get" action="/" id="filter"><input name="q" value="${esc(f.search ?? '')}" placeholder="company key" aria-label="search companies"> <select name="state" aria-label="state">${options}</select> <button>show</button></form>`;
}

function pager(p: OverviewPageInput): string {
  const pages = Math.max(1, Math.ceil(p.matched / p.pageSize));
  if (pages === 1) return '';
  const q = (page: number) =>
    esc(
      new URLSearchParams({
        ...(p.filter.search ? { q: p.filter.search } : {}),
        ...(p.filter.state ? { state: p.filter.state } : {}),
        page: String(page),
      }).toString(),
    );
  const prev = p.page > 1 ? `<a href="/?${q(p.page - 1)}" rel="prev">previous</a> ` : '';
  const next = p.page < pages ? ` <a href="/?${q(p.page + 1)}" rel="next">next</a>` : '';
  return `<p id="pages">${prev}page ${p.page} of ${pages}${next}</p>`;
}

function delayLine(seconds: number | null | undefined): string {
  if (seconds === undefined) return '';
  if (seconds === null) return '<p id="schedule-delay" class="muted">No run waits in the queue.</p>';
  return `<p id="schedule-delay" class="${seconds > 60 ? 'failed' : 'muted'}">The oldest queued run has waited ${esc(formatLag(seconds * 1000))}${seconds > 60 ? ': the box is behind its schedule' : ''}.</p>`;
}

function pushSection(p: OverviewPageInput): string {
  const push = p.push;
  const counts = Object.entries(push.counts);
  const cards = counts.length
    ? counts.map(([k, n]) => `<div class="card" data-status="${esc(k)}"><b>${n}</b>${esc(k)}</div>`).join('')
    : '<div class="card"><b>0</b>changes</div>';
  const retry = p.retryable?.length
    ? `<table id="retryable"><thead><tr><th>change</th><th>company</th><th>kind</th><th>status</th><th>error</th><th>updated</th><th></th></tr></thead><tbody>${p.retryable
        .map(
          (r) =>
            `<tr><td>${r.id}</td><td>${esc(r.company)}</td><td>${esc(r.kind)}</td><td class="failed">${esc(r.status)}</td><td class="error">${p.records.shown ? esc(r.error) : '<span class="muted">hidden</span>'}</td><td>${when(r.updatedAt)}</td><td>${
              holds(p.viewer, 'operator')
                ? `<form class="inline" method="post" action="/actions/retry-push"><input type="hidden" name="id" value="${r.id}"><button>retry</button></form>`
                : ''
            }</td></tr>`,
        )
        .join('')}</tbody></table>`
    : '';
  return `<h2>push</h2><div class="cards" id="push">${cards}<div class="card"><b class="${push.inDoubt ? 'failed' : ''}">${push.inDoubt}</b>in doubt</div><div class="card"><b>${
    push.oldestQueuedAt ? esc(formatLag(p.now - push.oldestQueuedAt.getTime())) : '-'
  }</b>oldest queued</div></div>${retry}`;
}

export function overviewPage(p: OverviewPageInput): string {
  const { overview: o } = p;
  const card = (state: string, n: number) =>
    `<div class="card" data-state="${state}"><b><a href="/?state=${state}">${n}</a></b>${state}</div>`;
  const summary = `<div class="cards" id="counts"><div class="card"><b>${o.total}</b>companies</div>${COMPANY_STATES.map((s) => card(s, o.counts[s])).join('')}<div class="card"><b><a href="/rejects">${o.rejectsOpen}</a></b>open rejects</div></div>`;
  const rows = p.shown.map(companyRow).join('');
  const table = rows
    ? `<table id="companies"><thead><tr><th>company</th><th>state</th><th>worst stream</th><th>open rejects</th><th>budget, last hour</th><th>under way</th><th>streams off</th></tr></thead><tbody>\n${rows}</tbody></table>`
    : `<p>${o.total ? 'No company matches.' : 'No company is configured.'}</p>`;
  return layout(
    'status',
    p.viewer,
    `${p.flash ? `<p class="flash">${esc(p.flash)}</p>` : ''}${summary}${delayLine(p.scheduleDelaySeconds)}
<p class="muted">Trouble first: a stream whose last run failed, then stale (no success for two of its job's intervals), then late (past 1.5); a stream the company turned off counts for none. Each company's page has its streams, charts and timeline.</p>
${filterForm(p.filter)}
${table}${pager(p)}
${pushSection(p)}
${p.models?.length ? modelTable(p.models, p.viewer, p.records) : ''}
${schemaChangesTable(p.schemaChanges)}`,
    10,
  );
}
