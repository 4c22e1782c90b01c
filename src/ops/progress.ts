/** Where the runs under way stand, and when they end, from the progress their rows store (run-progress.ts). */
import type { StoredProgress } from '../warehouse/runs.ts';
import type { ProgressBasis } from '../observers.ts';
import { sharedEtas } from '../sync/estimate.ts';

/** A running stream's progress as `status` shows it. `fraction` and `etaSeconds` are null when not known. */
export interface RunProgress {
  basis: ProgressBasis;
  fraction: number | null;
  etaSeconds: number | null;
  pagesDone: number;
  pagesLeft: number | null;
}

/** A company's runs under way taken together: their pages done over their pages done and left. */
export interface CompanyProgress {
  company: string;
  /** Streams under way, and those of them whose share is known. */
  streams: number;
  estimated: number;
  fraction: number | null;
  /** When the last of its estimated streams ends. */
  etaSeconds: number | null;
}

export interface RunningStream {
  company: string;
  stream: string;
  progress: StoredProgress;
}

const known = (p: StoredProgress) => p.pagesLeft !== null && p.perSecond !== null && p.perSecond > 0;

/**
 * Each running stream's progress, by `company/stream`. The streams of a company under way share its key's budget
 * (sharedEtas); each ETA counts from when its progress was stored, so it is carried forward to `now`.
 */
export function runProgress(running: readonly RunningStream[], now: Date): Map<string, RunProgress> {
  const out = new Map<string, RunProgress>();
  for (const [, streams] of byCompany(running)) {
    const estimated = streams.filter((s) => known(s.progress));
    const perSecond = Math.min(...estimated.map((s) => s.progress.perSecond!));
    const etas = sharedEtas(
      estimated.map((s) => s.progress.pagesLeft!),
      perSecond,
    );
    const etaOf = new Map(estimated.map((s, i) => [s.stream, etas[i]!]));
    for (const s of streams) {
      const p = s.progress;
      const eta = etaOf.get(s.stream);
      const since = Math.max(0, (now.getTime() - Date.parse(p.at)) / 1000);
      out.set(`${s.company}/${s.stream}`, {
        basis: p.basis,
        fraction: p.fraction === null ? null : round(Math.min(1, Math.max(0, p.fraction)), 4),
        etaSeconds: eta === undefined ? null : Math.round(Math.max(0, eta - since)),
        pagesDone: p.pagesDone,
        pagesLeft: p.pagesLeft === null ? null : Math.round(p.pagesLeft),
      });
    }
  }
  return out;
}

/** Each company with streams under way: its share done and when its last estimated stream ends. */
export function companyProgress(
  running: readonly RunningStream[],
  streams: ReadonlyMap<string, RunProgress>,
): CompanyProgress[] {
  return [...byCompany(running)].map(([company, list]) => {
    const shown = list.map((s) => streams.get(`${company}/${s.stream}`)!);
    const estimated = shown.filter((p) => p.pagesLeft !== null && p.fraction !== null);
    const done = estimated.reduce((n, p) => n + pagesDoneOf(p), 0);
    const total = done + estimated.reduce((n, p) => n + p.pagesLeft!, 0);
    const etas = shown.flatMap((p) => (p.etaSeconds === null ? [] : [p.etaSeconds]));
    return {
      company,
      streams: list.length,
      estimated: estimated.length,
      fraction: estimated.length === 0 ? null : total > 0 ? round(done / total, 4) : 1,
      etaSeconds: etas.length ? Math.max(...etas) : null,
    };
  });
}

/** The pages a stream's share stands for: those of earlier runs of its pass too (a resumed backfill). */
function pagesDoneOf(p: RunProgress): number {
  return p.fraction! < 1 ? (p.fraction! * p.pagesLeft!) / (1 - p.fraction!) : p.pagesDone;
}

function byCompany(running: readonly RunningStream[]): Map<string, RunningStream[]> {
  const m = new Map<string, RunningStream[]>();
  for (const r of running) m.set(r.company, [...(m.get(r.company) ?? []), r]);
  return m;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
