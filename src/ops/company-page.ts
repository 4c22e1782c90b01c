import type { AuditRow } from '../warehouse/audit.ts';
import type { EventRow } from '../warehouse/events.ts';
import type { SchemaChangeRow } from '../warehouse/schema-changes.ts';
import type { ResyncRequest } from '../warehouse/resyncs.ts';
import type { KeyFigures } from './live.ts';
import { esc, holds, keyRows, layout, schemaChangesTable, streamRow, when, type Viewer } from './page.ts';
import { companyBars } from './progress-view.ts';
import type { Status, StreamStatus } from './status.ts';

/** A company's own page: today's stream table, its charts, its schema changes and its timeline. */

export interface CompanyPageInput {
  company: string;
  status: Status;
  keys: KeyFigures[];
  viewer: Viewer;
  canRun: boolean;
  canResync: boolean;
  /** Streams may be turned off and on from here (the companies' actions are mounted). */
  canSwitch: boolean;
  charts?: string;
  /** The usage chart (./usage-chart.ts). */
  usage?: string;
  events: EventRow[];
  /** Fields its service sends that no column maps, or stopped sending. */
  schemaChanges: readonly SchemaChangeRow[];
  /** Its new fields' classes and its mode for them (new-fields-routes.ts newFieldsSection). */
  newFields?: string;
  /** Its latest re-sync requests, newest first. */
  resyncs: ResyncRequest[];
  /** The timeline's next page: events before this id. */
  olderThan?: number;
  /** Its latest audited changes, newest first. */
  audit: readonly AuditRow[];
  flash?: string;
  now: number;
}

function resyncButton(s: StreamStatus): string {
  const action = `/actions/companies/${encodeURIComponent(s.company)}/streams/${encodeURIComponent(s.stream)}/resync`;
  return `<form class="inline" method="post" action="${esc(action)}"><button>re-sync</button></form>`;
}

function detailText(d: unknown): string {
  if (!d || typeof d !== 'object') return '';
  return Object.entries(d as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('; ');
}

export function timelineTable(events: readonly EventRow[]): string {
  if (events.length === 0) return '<p class="muted" id="timeline-empty">Nothing recorded yet.</p>';
  const rows = events
    .map(
      (e) =>
        `<tr data-event="${esc(e.event)}" data-stream="${esc(e.stream ?? '')}"><td>${when(e.happened_at)}</td><td>${esc(e.event)}</td><td>${esc(e.stream ?? '')}</td><td class="actor">${esc(e.actor ?? '')}</td><td class="muted">${esc(detailText(e.detail))}</td></tr>`,
    )
    .join('');
  return `<table id="timeline"><thead><tr><th>when</th><th>event</th><th>stream</th><th>by</th><th>detail</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Who changed what of the company, from the CLI, the dashboard or the API (the audit), newest first. */
export function auditTable(rows: readonly AuditRow[]): string {
  if (rows.length === 0) return '<p class="muted" id="audit-empty">No change recorded.</p>';
  const body = rows
    .map(
      (a) =>
        `<tr data-action="${esc(a.action)}" data-outcome="${esc(a.outcome)}"><td>${when(a.at)}</td><td class="actor">${esc(a.actor)}</td><td>${esc(a.action)}</td><td>${esc(a.target ?? '')}</td><td class="${a.outcome === 'done' ? 'ok' : 'failed'}">${esc(a.outcome)}</td><td class="muted">${esc(a.reason ?? '')}</td></tr>`,
    )
    .join('');
  return `<table id="audit"><thead><tr><th>when</th><th>who</th><th>action</th><th>target</th><th>outcome</th><th>reason</th></tr></thead><tbody>${body}</tbody></table>`;
}

function resyncTable(resyncs: readonly ResyncRequest[]): string {
  if (resyncs.length === 0) return '';
  const state = (r: ResyncRequest) =>
    r.finishedAt ? esc(r.outcome ?? 'finished') : r.startedAt ? 'running' : 'waiting';
  const rows = resyncs
    .map(
      (r) =>
        `<tr data-resync="${r.id}" data-stream="${esc(r.stream)}" data-state="${state(r)}"><td>${r.id}</td><td>${esc(r.stream)}</td><td>${esc(r.via)}</td><td>${when(r.requestedAt)}</td><td>${when(r.startedAt)}</td><td>${when(r.finishedAt)}</td><td class="${state(r)}">${state(r)}</td></tr>`,
    )
    .join('');
  return `<h2>Re-syncs</h2><p class="muted">A re-sync reads the stream again from the start; its rows stay readable meanwhile, and its progress shows in the table above.</p>
<table id="resyncs"><thead><tr><th>request</th><th>stream</th><th>asked from</th><th>asked</th><th>started</th><th>finished</th><th>state</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A tick beside each stream, for the streams form below the table. */
function switchBox(s: StreamStatus): string {
  return `<input type="checkbox" name="streams" value="${esc(s.stream)}" form="streams-form" aria-label="${esc(s.stream)}"> `;
}

/** Turns the ticked streams off (their rows purged, the key typed again) or on. */
function streamsForm(company: string, off: readonly string[]): string {
  const action = `/actions/companies/${encodeURIComponent(company)}/streams`;
  return `<form id="streams-form" method="post" action="${esc(action)}"><span class="muted">ticked streams:</span>
<button name="turn" value="off">turn off</button> <label><input type="checkbox" name="purge"> and purge their rows, confirm key</label> <input name="confirm" size="10" autocomplete="off">
<button name="turn" value="on">turn on</button></form>
<p class="muted" id="streams-off">${off.length ? `Off: ${esc(off.join(', '))}. ` : ''}A stream that is off is neither read nor scheduled; its rows stay unless purged. A stream others read goes off only with them.</p>`;
}

export function companyPage(p: CompanyPageInput): string {
  const key = encodeURIComponent(p.company);
  const switching = p.canSwitch && p.viewer.signedIn;
  const rows = p.status.streams
    .map((s) => {
      let row = streamRow(s, p.viewer, p.canRun);
      if (switching) row = row.replace(/<td>/, `<td>${switchBox(s)}`);
      const resync = p.canResync && holds(p.viewer, 'operator') && s.freshness !== 'off';
      return resync ? row.replace(/<\/td><\/tr>$/, `${resyncButton(s)}</td></tr>`) : row;
    })
    .join('');
  const off = p.status.streams.filter((s) => s.freshness === 'off').map((s) => s.stream);
  const switches = switching
    ? streamsForm(p.company, off)
    : off.length
      ? `<p class="muted" id="streams-off">Off: ${esc(off.join(', '))}: neither read nor scheduled.</p>`
      : '';
  const older = p.olderThan ? `<p><a href="/companies/${key}?before=${p.olderThan}#timeline">older events</a></p>` : '';
  return layout(
    `company ${p.company}`,
    p.viewer,
    `${p.flash ? `<p class="flash">${esc(p.flash)}</p>` : ''}<h2>company ${esc(p.company)}</h2>
<p class="muted"><a href="/">all companies</a> · <a href="/companies">companies list</a> · <a href="/rejects?company=${key}">its rejects (${p.status.rejectsTotal})</a></p>
${companyBars(p.status.progress)}
<table class="streams"><thead><tr><th>stream</th><th>freshness</th><th>lag</th><th>last run</th><th>last success</th><th>rows (last run)</th><th>rejects</th><th>error</th><th>next run</th><th></th></tr></thead>
<tbody>${rows}</tbody></table>
${switches}
${resyncTable(p.resyncs)}
<h2>API key (live, this process)</h2>${keyRows(p.keys, p.now)}
<h2>Usage</h2>${p.usage ?? ''}
${schemaChangesTable(p.schemaChanges)}
${p.newFields ?? ''}
<h2 id="timeline-heading">Timeline</h2>${timelineTable(p.events)}${older}
<h2 id="audit-heading">Changes</h2>${auditTable(p.audit)}
${p.charts ?? ''}`,
    10,
  );
}
