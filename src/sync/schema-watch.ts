/** Fields the service sends that no column maps: announced once when first seen, and once when they stop coming. */
import { mapRecord } from '../warehouse/mapper.ts';
import { recordAppeared, recordedFields, recordRead, type NewField } from '../warehouse/schema-changes.ts';
import { recordEvents } from '../warehouse/events.ts';
import type { Target } from '../warehouse/targets.ts';
import type { StreamRun } from './context.ts';

/** What a read tells the watch: each page's records, then its end. */
export interface FieldWatch {
  page(items: readonly object[], extras: Record<string, unknown>): Promise<void>;
  end(): Promise<void>;
}

/** Per target, the top-level field names the mapper puts in a column, and those it keeps in `_extra`. */
interface Names {
  mapped: Set<string>;
  extra: Set<string>;
}
const namesOf = new WeakMap<Target, Names>();

/** Per company and stream, its recorded fields (true: gone), loaded once per process. */
const recorded = new Map<string, Promise<Map<string, boolean>>>();

/** Whether the mapper keeps `name` in `_extra`: asked of the mapper once per target and name. */
function isExtra(names: Names, target: Target, name: string, value: unknown, extras: Record<string, unknown>): boolean {
  if (names.mapped.has(name)) return false;
  if (names.extra.has(name)) return true;
  let extra = false;
  try {
    const row = mapRecord(target, { [name]: value }, { companyKey: '-', extras }).row;
    extra = typeof row._extra === 'object' && row._extra !== null && name in row._extra;
  } catch {
    extra = false;
  }
  (extra ? names.extra : names.mapped).add(name);
  return extra;
}

/** Shapes (field name lists) remembered per read: a list's records mostly come in a handful of them. */
const SHAPES = 8;

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
 * The watch of one read. A page costs the field names of its records, compared with the few lists of names
 * this read met last (a list's records mostly share one); only a record with a new list has its names looked
 * up, and only a name never seen is asked of the mapper. About 30 to 120 µs a page of 200 records at `medium`
 * (individuals, shift assignments, credentials), against some 4 ms of the sync's CPU for the page. A field
 * not recorded yet costs one statement, once per process; the read's end one more, when it met such fields.
 * A read counts as complete for a field that stops coming only when it is of the stream's whole list.
 */
export function watchFields(run: StreamRun, complete: boolean): FieldWatch {
  const { ctx, stream } = run;
  const key = `${ctx.companyKey}\u0000${stream.name}`;
  const counts = new Map<string, number>();
  let names = namesOf.get(stream.target);
  if (!names) namesOf.set(stream.target, (names = { mapped: new Set(), extra: new Set() }));
  const known = names;
  const shapes: { fields: readonly string[]; extra: readonly string[] }[] = [];

  const sameFields = (a: readonly string[], b: readonly string[]) => {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  };
  const fieldsOf = (item: Record<string, unknown>, extras: Record<string, unknown>): readonly string[] => {
    const fields = Object.keys(item);
    for (const shape of shapes) if (sameFields(shape.fields, fields)) return shape.extra;
    const extra = fields.filter((n) => isExtra(known, stream.target, n, item[n], extras));
    shapes.unshift({ fields, extra });
    if (shapes.length > SHAPES) shapes.pop();
    return extra;
  };

  const watch: FieldWatch = {
    async page(items, extras) {
      let fresh: NewField[] | undefined;
      const known = await (recorded.get(key) ?? load(run, key));
      for (const item of items as Record<string, unknown>[]) {
        for (const path of fieldsOf(item, extras)) {
          counts.set(path, (counts.get(path) ?? 0) + 1);
          if (known.get(path) === false || fresh?.some((f) => f.path === path)) continue;
          (fresh ??= []).push({ path, jsonType: jsonType(item[path]), example: masked(item[path]) });
        }
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
      const known = await (recorded.get(key) ?? load(run, key));
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
    page: (items, extras) => told('page', () => watch.page(items, extras)),
    end: () => told('end', () => watch.end()),
  };
}

function load(run: StreamRun, key: string): Promise<Map<string, boolean>> {
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
