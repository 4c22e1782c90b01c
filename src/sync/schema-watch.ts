/** Fields the service sends that no column maps: announced once when first seen, and once when they stop coming. */
import type { MappedPage } from '../warehouse/page-map.ts';
import { recordAppeared, recordedFields, recordRead, type NewField } from '../warehouse/schema-changes.ts';
import { recordEvents } from '../warehouse/events.ts';
import type { StreamRun } from './context.ts';

/** What a read tells the watch: each page as mapped (before it is written), then its end. */
export interface FieldWatch {
  page(page: MappedPage): Promise<void>;
  end(): Promise<void>;
}

/**
 * Per warehouse, company and stream, its recorded fields (true: gone), loaded once per process: a process that
 * writes two warehouses (a bench, a test) holds companies of the same name in both.
 */
const recordedIn = new WeakMap<object, Map<string, Promise<Map<string, boolean>>>>();

const jsonType = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v;

/** The value with every string masked (letters x, digits 9): its shape, never a personal value. */
export function masked(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(/\p{L}/gu, 'x').replace(/\p{N}/gu, '9');
  if (Array.isArray(v)) return v.slice(0, 3).map(masked);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, masked(x)]));
  return v;
}

/**
 * Visits each field of a page's rows' `_extra` and their lists' rows' `_extra`, once per record, by its path (the
 * record's own by name, a list element's after the list's path). A page costs a look at each row's `_extra`,
 * which is null but where the service sent something no column maps.
 */
function eachExtraField(page: MappedPage, visit: (path: string, value: unknown) => void): void {
  const lists = page.target.children ?? [];
  for (const m of page.mapped) {
    const extra = m.row._extra as Record<string, unknown> | null;
    if (extra) for (const k in extra) visit(k, extra[k]);
    let seen: Set<string> | undefined;
    for (let i = 0; i < m.children.length; i++) {
      for (const child of m.children[i]!) {
        const e = child._extra as Record<string, unknown> | null;
        if (!e) continue;
        for (const k in e) {
          const path = `${lists[i]!.path}.${k}`;
          if ((seen ??= new Set()).has(path)) continue;
          seen.add(path);
          visit(path, e[k]);
        }
      }
    }
  }
}

/**
 * The watch of one read. A field not recorded yet costs one statement, once per process; the read's end one more,
 * when it met such fields. A read counts as complete for a field that stops coming only when it is of the
 * stream's whole list.
 */
export function watchFields(run: StreamRun, complete: boolean): FieldWatch {
  const { ctx, stream } = run;
  const key = `${ctx.companyKey}\u0000${stream.name}`;
  let recorded = recordedIn.get(ctx.warehouse);
  if (!recorded) recordedIn.set(ctx.warehouse, (recorded = new Map()));
  const counts = new Map<string, number>();

  const watch: FieldWatch = {
    async page(page) {
      let met: Map<string, unknown> | undefined;
      eachExtraField(page, (path, value) => {
        counts.set(path, (counts.get(path) ?? 0) + 1);
        if (!met?.has(path)) (met ??= new Map()).set(path, value);
      });
      if (!met) return;
      let fresh: NewField[] | undefined;
      const known = await (recorded.get(key) ?? load(run, recorded, key));
      for (const [path, value] of met) {
        if (known.get(path) === false) continue;
        (fresh ??= []).push({ path, jsonType: jsonType(value), example: masked(value) });
      }
      if (!fresh) return;
      const appeared = await recordAppeared(ctx.warehouse, ctx.companyKey, stream.name, fresh);
      for (const f of fresh) known.set(f.path, false);
      await announce(
        run,
        'appeared',
        fresh.filter((f) => appeared.includes(f.path)),
      );
    },
    async end() {
      const known = await (recorded.get(key) ?? load(run, recorded, key));
      const coming = [...known].some(([, gone]) => !gone);
      if (counts.size === 0 && !(complete && coming)) return;
      const gone = await recordRead(
        ctx.warehouse,
        ctx.companyKey,
        stream.name,
        [...counts].map(([path, records]) => ({ path, records })),
        complete,
      );
      for (const path of gone) known.set(path, true);
      await announce(
        run,
        'gone',
        gone.map((path) => ({ path })),
      );
    },
  };
  // The watch only tells: a warehouse that fails it (an outage the page writes wait out) never fails the read.
  const told = (what: string, f: () => Promise<void>) =>
    f().catch((err: unknown) =>
      ctx.log.warn(
        { err, stream: stream.name, company: ctx.companyKey },
        `could not record the fields a read met (${what})`,
      ),
    );
  return {
    page: (page) => told('page', () => watch.page(page)),
    end: () => told('end', () => watch.end()),
  };
}

function load(
  run: StreamRun,
  recorded: Map<string, Promise<Map<string, boolean>>>,
  key: string,
): Promise<Map<string, boolean>> {
  const p = recordedFields(run.ctx.warehouse, run.ctx.companyKey, run.stream.name);
  recorded.set(key, p);
  p.catch(() => recorded.delete(key));
  return p;
}

/** Logs each change once, counts it for the metric and puts it on the company's timeline. */
async function announce(
  run: StreamRun,
  kind: 'appeared' | 'gone',
  fields: readonly { path: string; jsonType?: string }[],
): Promise<void> {
  if (fields.length === 0) return;
  const { ctx, stream } = run;
  for (const f of fields) {
    const where = { company: ctx.companyKey, stream: stream.name, path: f.path };
    if (kind === 'appeared')
      ctx.log.warn(
        { ...where, jsonType: f.jsonType },
        'the service sends a field no column maps; it is kept in _extra',
      );
    else ctx.log.warn(where, 'a field the service sent is gone: no record of three complete reads in a row had it');
    ctx.observers?.emit('schemaChange', { ...where, kind });
  }
  await recordEvents(
    ctx.warehouse,
    fields.map((f) => ({
      companyKey: ctx.companyKey,
      event: kind === 'appeared' ? 'field_appeared' : 'field_gone',
      stream: stream.name,
      detail: { path: f.path, ...(f.jsonType ? { jsonType: f.jsonType } : {}) },
    })),
  );
}
