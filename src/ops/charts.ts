import type { RateLimit } from '../config.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { readCharts, type ChartsData, type MinuteUse, type PushHour, type RunRows } from './charts-data.ts';
import type { LiveFigures } from './live.ts';
import { esc } from './page.ts';

/**
 * The status page's charts, drawn on the server as SVG: no script to serve or load, they show wherever the page
 * does, and each comes with its numbers as a table for a reader who wants them exactly.
 */

export interface ChartsInput {
  data: ChartsData;
  /** Requests each company's key may send per minute (its budget), drawn as the limit line. */
  limitPerMinute?: (company: string) => number | undefined;
  /** Exact requests per minute sent by this process, per company, when it sent any. */
  ownMinutes?: Map<string, MinuteUse[]>;
}

/** Where the plot sits in its SVG; data attributes on the SVG say so, to read values back from the drawing. */
interface Frame {
  w: number;
  h: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

const BUDGET: Frame = { w: 720, h: 150, left: 48, right: 12, top: 10, bottom: 22 };
const RUNS: Frame = { w: 340, h: 90, left: 44, right: 8, top: 8, bottom: 18 };
const PUSH: Frame = { w: 720, h: 150, left: 48, right: 12, top: 10, bottom: 22 };

/** Colours of push statuses, final outcomes first; a status not named here is grey. */
const STATUS_COLOURS: Record<string, string> = {
  applied: '#2f9e55',
  refused: '#d97706',
  failed: '#c0392b',
  in_doubt: '#8e44ad',
  sending: '#2563eb',
  queued: '#94a3b8',
};

const STYLE = `<style>
.chart{background:#fff;box-shadow:0 1px 2px #0001;padding:.5em .8em;margin:0 0 .8em}
.chart svg{display:block;width:100%;max-width:960px;height:auto;font:11px system-ui,sans-serif}
.small-multiples svg{max-width:none}
.chart .axis{stroke:#cbd5e1}.chart .grid{stroke:#eef0f4}.chart text{fill:#6b7280}
.chart .series{fill:none;stroke:#2563eb;stroke-width:1.6}.chart .own{fill:none;stroke:#2f9e55;stroke-width:1.2;stroke-dasharray:3 2}
.chart .limit{stroke:#c0392b;stroke-dasharray:6 4}.chart .run{fill:#2563eb}.chart .run.failed{fill:#c0392b}.chart .run.interrupted{fill:#d97706}
.chart h3{font-size:13px;margin:0 0 .3em}.chart details{margin-top:.3em}.chart table{font-size:12px}
.small-multiples{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:.6em}
.legend{display:flex;gap:1em;flex-wrap:wrap;font-size:12px;margin:.2em 0}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
</style>`;

/** The charts section of the status page. */
export function chartsSection(p: ChartsInput): string {
  return `<section id="charts">${STYLE}
<h2>API key budget: requests per minute, last ${hoursOf(p.data.since.budget, p.data.now)} hours</h2>
<p class="muted">From the runs' records: a run's requests are spread evenly over its start to finish (the limiter paces them evenly); the dashed green line, where shown, is this process's own requests minute by minute. The red dashed line is the key's budget.</p>
${[...p.data.budget].map(([company, minutes]) => budgetChart(company, minutes, p.limitPerMinute?.(company), p.ownMinutes?.get(company))).join('\n')}
<h2>Rows written per run, last ${hoursOf(p.data.since.runs, p.data.now)} hours</h2>
${[...p.data.runs].map(([company, byStream]) => runsCharts(company, byStream, p.data.since.runs, p.data.now)).join('\n')}
<h2>Pushed changes per hour by status, last ${hoursOf(p.data.since.push, p.data.now)} hours</h2>
${pushChart(p.data.push, p.data.since.push, p.data.now)}
</section>`;
}

const hoursOf = (since: Date, now: Date) => Math.round((now.getTime() - since.getTime()) / 3_600_000);

function budgetChart(
  company: string,
  minutes: MinuteUse[],
  limit: number | undefined,
  own: MinuteUse[] | undefined,
): string {
  const f = BUDGET;
  const from = minutes[0]?.at.getTime() ?? 0;
  const to = minutes.at(-1)?.at.getTime() ?? from;
  const top = niceMax(
    Math.max(limit ?? 0, ...minutes.map((m) => m.requests), ...(own ?? []).map((m) => m.requests), 1),
  );
  const x = scale(from, Math.max(to, from + 1), f.left, f.w - f.right);
  const y = scale(0, top, f.h - f.bottom, f.top);
  const line = (ms: MinuteUse[]) => ms.map((m) => `${r1(x(m.at.getTime()))},${r1(y(m.requests))}`).join(' ');
  const ownLine = own?.some((m) => m.requests > 0)
    ? `<polyline class="own" points="${line(own)}"><title>this process, exact</title></polyline>`
    : '';
  const limitLine = limit
    ? `<line class="limit" x1="${f.left}" x2="${f.w - f.right}" y1="${r1(y(limit))}" y2="${r1(y(limit))}"><title>budget: ${limit} a minute</title></line>`
    : '';
  return `<div class="chart budget" data-company="${esc(company)}"><h3>${esc(company)}</h3>
<svg viewBox="0 0 ${f.w} ${f.h}" role="img" aria-label="requests per minute of ${esc(company)}" ${frameAttrs(f, top, from, to)}>
${yAxis(f, y, top)}${timeAxis(f, x, from, to)}${limitLine}
<polyline class="series" points="${line(minutes)}"><title>requests a minute (from runs)</title></polyline>${ownLine}
</svg>${budgetTable(minutes, limit)}</div>`;
}

/** The numbers behind a budget chart, per hour: requests sent and the busiest minute. */
function budgetTable(minutes: MinuteUse[], limit: number | undefined): string {
  const hours = new Map<number, { total: number; peak: number }>();
  for (const m of minutes) {
    const h = Math.floor(m.at.getTime() / 3_600_000) * 3_600_000;
    const got = hours.get(h) ?? { total: 0, peak: 0 };
    hours.set(h, { total: got.total + m.requests, peak: Math.max(got.peak, m.requests) });
  }
  const rows = [...hours]
    .map(
      ([h, v]) =>
        `<tr><td>${hhmm(h)}</td><td class="n">${Math.round(v.total)}</td><td class="n">${Math.round(v.peak)}</td><td class="n">${limit ?? '-'}</td></tr>`,
    )
    .join('');
  return `<details><summary>numbers</summary><table><thead><tr><th>hour (UTC)</th><th>requests</th><th>busiest minute</th><th>budget a minute</th></tr></thead><tbody>${rows}</tbody></table></details>`;
}

function runsCharts(company: string, byStream: Map<string, RunRows[]>, since: Date, now: Date): string {
  if (byStream.size === 0)
    return `<div class="chart runs" data-company="${esc(company)}"><h3>${esc(company)}</h3><p class="muted">No run finished in these hours.</p></div>`;
  const charts = [...byStream].map(([stream, runs]) => runChart(stream, runs, since, now)).join('');
  const rows = [...byStream]
    .map(([stream, runs]) => {
      const sum = runs.reduce((a, r) => a + r.rows, 0);
      return `<tr><td>${esc(stream)}</td><td class="n">${runs.length}</td><td class="n">${sum}</td><td class="n">${runs.at(-1)!.rows}</td><td class="n">${Math.max(...runs.map((r) => r.rows))}</td></tr>`;
    })
    .join('');
  return `<div class="chart runs" data-company="${esc(company)}"><h3>${esc(company)}</h3><div class="small-multiples">${charts}</div>
<details><summary>numbers</summary><table><thead><tr><th>stream</th><th>runs</th><th>rows</th><th>last run</th><th>most in a run</th></tr></thead><tbody>${rows}</tbody></table></details></div>`;
}

function runChart(stream: string, runs: RunRows[], since: Date, now: Date): string {
  const f = RUNS;
  const from = since.getTime();
  const to = now.getTime();
  const top = niceMax(Math.max(1, ...runs.map((r) => r.rows)));
  const x = scale(from, to, f.left, f.w - f.right);
  const y = scale(0, top, f.h - f.bottom, f.top);
  const bars = runs
    .map((r) => {
      // A run that wrote nothing still shows, as a mark on the axis.
      const h = r.rows > 0 ? Math.max(y(0) - y(r.rows), 1) : 0;
      const mark =
        r.rows > 0
          ? ''
          : `<circle class="run ${esc(r.outcome)}" cx="${r1(x(r.startedAt.getTime()))}" cy="${r1(y(0))}" r="2"/>`;
      return `<rect class="run ${esc(r.outcome)}" data-run="${r.id}" data-rows="${r.rows}" x="${r1(x(r.startedAt.getTime()) - 1.5)}" y="${r1(y(r.rows))}" width="3" height="${r1(h)}"><title>${esc(stream)} ${esc(iso(r.startedAt))}: ${r.rows} rows, ${esc(r.outcome)}</title></rect>${mark}`;
    })
    .join('');
  return `<svg class="stream" data-stream="${esc(stream)}" viewBox="0 0 ${f.w} ${f.h}" role="img" aria-label="rows per run of ${esc(stream)}" ${frameAttrs(f, top, from, to)}>
<text x="${f.left + 4}" y="${f.top + 10}" style="fill:#1d2330;font-weight:600">${esc(stream)}</text>${yAxis(f, y, top, true)}${timeAxis(f, x, from, to)}${bars}</svg>`;
}

function pushChart(hours: PushHour[], since: Date, now: Date): string {
  const f = PUSH;
  const statuses = [...new Set(hours.flatMap((h) => Object.keys(h.counts)))].sort((a, b) => order(a) - order(b));
  if (statuses.length === 0)
    return `<div class="chart push"><p class="muted">No change was pushed in these hours.</p></div>`;
  const from = Math.floor(since.getTime() / 3_600_000) * 3_600_000;
  const to = now.getTime();
  const top = niceMax(Math.max(1, ...hours.map((h) => sumOf(h.counts))));
  const x = scale(from, to, f.left, f.w - f.right);
  const y = scale(0, top, f.h - f.bottom, f.top);
  const barW = Math.max(2, x(from + 3_600_000) - x(from) - 2);
  const bars = hours
    .map((h) => {
      let base = 0;
      return statuses
        .filter((s) => h.counts[s])
        .map((s) => {
          const n = h.counts[s]!;
          const rect = `<rect class="push-bar" data-status="${esc(s)}" data-hour="${iso(h.at)}" data-count="${n}" fill="${colour(s)}" x="${r1(x(h.at.getTime()) + 1)}" y="${r1(y(base + n))}" width="${r1(barW)}" height="${r1(y(base) - y(base + n))}"><title>${hhmm(h.at.getTime())}: ${n} ${esc(s)}</title></rect>`;
          base += n;
          return rect;
        })
        .join('');
    })
    .join('');
  const legend = statuses.map((s) => `<span><i style="background:${colour(s)}"></i>${esc(s)}</span>`).join('');
  const rows = hours
    .filter((h) => sumOf(h.counts) > 0)
    .map(
      (h) =>
        `<tr><td>${hhmm(h.at.getTime())}</td>${statuses.map((s) => `<td class="n">${h.counts[s] ?? 0}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<div class="chart push"><div class="legend">${legend}</div>
<svg viewBox="0 0 ${f.w} ${f.h}" role="img" aria-label="pushed changes per hour by status" ${frameAttrs(f, top, from, to)}>${yAxis(f, y, top)}${timeAxis(f, x, from, to)}${bars}</svg>
<details><summary>numbers</summary><table><thead><tr><th>hour (UTC)</th>${statuses.map((s) => `<th>${esc(s)}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table></details></div>`;
}

const order = (s: string) => {
  const i = Object.keys(STATUS_COLOURS).indexOf(s);
  return i < 0 ? 99 : i;
};
const colour = (s: string) => STATUS_COLOURS[s] ?? '#64748b';
const sumOf = (counts: Record<string, number>) => Object.values(counts).reduce((a, n) => a + n, 0);

function frameAttrs(f: Frame, top: number, from: number, to: number): string {
  return `data-plot-left="${f.left}" data-plot-right="${f.w - f.right}" data-plot-top="${f.top}" data-plot-bottom="${f.h - f.bottom}" data-y-max="${top}" data-x-from="${from}" data-x-to="${to}"`;
}

function yAxis(f: Frame, y: (v: number) => number, top: number, compact = false): string {
  const ticks = compact ? [0, top] : [0, top / 2, top];
  return ticks
    .map(
      (v) =>
        `<line class="grid" x1="${f.left}" x2="${f.w - f.right}" y1="${r1(y(v))}" y2="${r1(y(v))}"/><text x="${f.left - 4}" y="${r1(y(v) + 4)}" text-anchor="end">${short(v)}</text>`,
    )
    .join('')
    .concat(`<line class="axis" x1="${f.left}" x2="${f.left}" y1="${f.top}" y2="${f.h - f.bottom}"/>`);
}

/** Hour ticks, few enough to read: every hour up to 8 hours, then every 3 (6 on a small chart) up to a day and an hour. */
function timeAxis(f: Frame, x: (v: number) => number, from: number, to: number): string {
  const span = (to - from) / 3_600_000;
  const every = (span <= 8 ? 1 : span <= 25 ? (f.w < 400 ? 6 : 3) : 12) * 3_600_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(from / every) * every; t <= to; t += every) ticks.push(t);
  const base = f.h - f.bottom;
  return `<line class="axis" x1="${f.left}" x2="${f.w - f.right}" y1="${base}" y2="${base}"/>${ticks
    .map(
      (t) =>
        `<line class="axis" x1="${r1(x(t))}" x2="${r1(x(t))}" y1="${base}" y2="${base + 3}"/><text x="${r1(x(t))}" y="${base + 14}" text-anchor="middle">${hhmm(t)}</text>`,
    )
    .join('')}`;
}

/** The linear map of [d0, d1] onto [p0, p1]. */
const scale = (d0: number, d1: number, p0: number, p1: number) => (v: number) =>
  p0 + ((v - d0) / (d1 - d0 || 1)) * (p1 - p0);

/** A round axis top at or above v: 1, 2 or 5 times a power of ten. */
export function niceMax(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((n) => n >= v)!;
}

const r1 = (v: number) => Math.round(v * 10) / 10;
const iso = (d: Date) => d.toISOString();
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const short = (v: number) =>
  v >= 10_000 ? `${Math.round(v / 1000)}k` : v >= 1000 ? `${r1(v / 1000)}k` : String(r1(v));

/** Reads and draws the charts for the status page of these companies. */
export async function statusCharts(
  wh: Warehouse,
  opts: {
    companies: readonly string[];
    live: LiveFigures;
    budget?: (company: string) => RateLimit | undefined;
    now?: Date;
  },
): Promise<string> {
  const data = await readCharts(wh, { companies: opts.companies, now: opts.now });
  const own = new Map(
    opts.companies.map((c) => [c, opts.live.minutes(c, data.since.budget.getTime(), data.now.getTime())]),
  );
  const limitPerMinute = (company: string) => {
    const budget = opts.budget?.(company);
    return budget ? Math.floor((budget.limit * 60_000) / budget.periodMs) : undefined;
  };
  return chartsSection({ data, limitPerMinute, ownMinutes: own });
}
