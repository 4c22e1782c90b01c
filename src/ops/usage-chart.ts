import type { UsageDay } from '../warehouse/usage.ts';
import { niceMax } from './charts.ts';
import { esc } from './page.ts';

/** A company's requests per day, as bars drawn on the server, with the numbers per stream as a table. */

const W = 720;
const H = 150;
const LEFT = 48;
const BOTTOM = 22;
const TOP = 10;

/** Every day from `since` to `until` (YYYY-MM-DD, UTC), in order. */
function daysBetween(since: string, until: string): string[] {
  const out: string[] = [];
  for (let d = Date.parse(`${since}T00:00:00Z`); d <= Date.parse(`${until}T00:00:00Z`); d += 86_400_000)
    out.push(new Date(d).toISOString().slice(0, 10));
  return out;
}

export function usageChart(company: string, usage: readonly UsageDay[], since: string, until: string): string {
  const days = daysBetween(since, until);
  const perDay = new Map(days.map((d) => [d, 0]));
  for (const u of usage) perDay.set(u.day, (perDay.get(u.day) ?? 0) + u.requests);
  const top = niceMax(Math.max(1, ...perDay.values()));
  const step = (W - LEFT - 8) / days.length;
  const y = (v: number) => H - BOTTOM - (v / top) * (H - BOTTOM - TOP);
  const bars = days
    .map((d, i) => {
      const n = perDay.get(d)!;
      const x = LEFT + i * step;
      return `<rect class="usage-bar" data-day="${d}" data-requests="${n}" x="${x.toFixed(1)}" y="${y(n).toFixed(1)}" width="${Math.max(1, step - 2).toFixed(1)}" height="${(H - BOTTOM - y(n)).toFixed(1)}" fill="#2563eb"><title>${d}: ${n} requests</title></rect>`;
    })
    .join('');
  const axis = `<line class="axis" x1="${LEFT}" x2="${W - 8}" y1="${H - BOTTOM}" y2="${H - BOTTOM}"/><text x="${LEFT - 4}" y="${TOP + 4}" text-anchor="end">${top}</text><text x="${LEFT - 4}" y="${H - BOTTOM}" text-anchor="end">0</text>
<text x="${LEFT}" y="${H - 6}">${days[0]}</text><text x="${W - 8}" y="${H - 6}" text-anchor="end">${days.at(-1)}</text>`;
  const rows = usage
    .map(
      (u) =>
        `<tr><td>${u.day}</td><td>${esc(u.stream)}</td><td class="n">${u.requests}</td><td class="n">${u.runs}</td></tr>`,
    )
    .join('');
  return `<section class="chart usage" data-company="${esc(company)}"><h3>Requests per day (UTC), since ${since}</h3>
<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="requests per day of ${esc(company)}" style="width:100%;max-width:960px;height:auto;font:11px system-ui,sans-serif">${axis}${bars}</svg>
<details><summary>per day and stream</summary><table><thead><tr><th>day</th><th>stream</th><th>requests</th><th>runs</th></tr></thead><tbody>${rows}</tbody></table></details></section>`;
}
