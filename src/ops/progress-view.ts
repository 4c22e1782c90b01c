/** Progress of the runs under way as people read it: words for the terminal, a bar for the status page. */
import type { CompanyProgress, RunProgress } from './progress.ts';

/** `4 min 05 s`, `1 h 12 min`, `35 s`. */
export function formatEta(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

const percent = (f: number) => `${(f * 100).toFixed(f < 0.1 ? 1 : 0)}%`;

/** `42% (windows), about 3 min 10 s left`; `412 pages, share not known` where nothing tells it. */
export function describeProgress(p: Pick<RunProgress, 'basis' | 'fraction' | 'etaSeconds' | 'pagesDone'>): string {
  if (p.fraction === null) return `${p.pagesDone} pages, share not known`;
  const eta = p.etaSeconds === null ? '' : `, about ${formatEta(p.etaSeconds)} left`;
  return `${percent(p.fraction)} (${p.basis})${eta}`;
}

export function describeCompany(c: CompanyProgress): string {
  const share = c.fraction === null ? 'share not known' : `${percent(c.fraction)} done`;
  const eta = c.etaSeconds === null ? '' : `, about ${formatEta(c.etaSeconds)} left`;
  const unknown =
    c.streams > c.estimated ? ` (${c.streams - c.estimated} of ${c.streams} streams without an estimate)` : '';
  return `${c.company}: ${c.streams} stream${c.streams === 1 ? '' : 's'} under way, ${share}${eta}${unknown}`;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A bar with its share and ETA: a native `<progress>` (drawn without JavaScript or CSS), and the same in words
 * beside it for those who cannot see it. Without a known share, the pages read so far alone.
 */
export function progressBar(
  p: Pick<RunProgress, 'basis' | 'fraction' | 'etaSeconds' | 'pagesDone'>,
  label: string,
): string {
  const words = esc(describeProgress(p));
  if (p.fraction === null) return `<span class="progress unknown">${words}</span>`;
  return `<span class="progress"><progress max="1" value="${p.fraction.toFixed(4)}" aria-label="${esc(label)}">${percent(p.fraction)}</progress> ${words}</span>`;
}

/** Each company with runs under way: one bar for all its streams, and when the last one ends. */
export function companyBars(companies: readonly CompanyProgress[]): string {
  if (companies.length === 0) return '';
  const rows = companies.map((c) => {
    const bar =
      c.fraction === null
        ? ''
        : `<progress max="1" value="${c.fraction.toFixed(4)}" aria-label="${esc(c.company)} progress">${percent(c.fraction)}</progress> `;
    return `<li>${bar}${esc(describeCompany(c))}</li>`;
  });
  return `<h2>Under way</h2><ul id="progress">${rows.join('')}</ul>`;
}
