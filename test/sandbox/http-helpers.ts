import { request } from 'undici';
import { API_VERSION } from '../../src/source/endpoints.ts';

export interface Target {
  url: string;
  apiKey: string;
}

export interface Got {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: () => any;
}

export interface CallOptions {
  method?: 'GET' | 'POST';
  /** null sends no key. */
  key?: string | null;
  accept?: string;
  body?: unknown;
  rawBody?: string;
}

/** One request as a client of the service makes it. */
export async function call(target: Target, path: string, opts: CallOptions = {}): Promise<Got> {
  const headers: Record<string, string> = {};
  const key = opts.key === undefined ? target.apiKey : opts.key;
  if (key !== null) headers['Authorization-Token'] = key;
  if (opts.accept !== undefined) headers.accept = opts.accept;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(target.url + path, {
    method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
  });
  const text = await res.body.text();
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode, headers: flat, text, json: () => JSON.parse(text) };
}

/** `path` with `api-version=2.0` and the given query (values encoded, so `+` arrives as `+`). */
export function v2(path: string, query: Record<string, string | number | boolean> = {}): string {
  const q = new URLSearchParams({ 'api-version': API_VERSION });
  for (const [k, v] of Object.entries(query)) q.set(k, String(v));
  return `${path}?${q}`;
}

/** Ground truth from the admin route. */
export async function truth(
  target: Target,
  endpoint: string,
  query: Record<string, string | number | boolean> = {},
): Promise<any[]> {
  const q = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await call(target, `/_sandbox/truth/${endpoint}?${q}`, { key: null });
  if (res.status !== 200) throw new Error(`truth ${endpoint}: ${res.status} ${res.text}`);
  return res.json();
}

/** Every page of an envelope endpoint, as a client walks them. */
export async function allPages(
  target: Target,
  path: string,
  query: Record<string, string | number | boolean>,
  limit = 200,
) {
  const items: any[] = [];
  for (let offset = 0; ; offset += limit) {
    const res = await call(target, v2(path, { ...query, Offset: offset, Limit: limit }));
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    const page = res.json();
    items.push(...page.Data);
    if (!page.HasMoreResults) return items;
  }
}

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
    return ENTITY[e]!;
  });
}

/** A strict little XML parser for asserting on the sandbox's XML: it throws on anything not well formed. */
export function parseXml(doc: string): XmlElement {
  let pos = 0;
  const decl = /^<\?xml[^?]*\?>/.exec(doc);
  if (decl) pos = decl[0].length;
  const element = (): XmlElement => {
    const open = /^<([A-Za-z_][\w.\-:]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/.exec(doc.slice(pos));
    if (!open) throw new Error(`expected an element at ${pos}: ${doc.slice(pos, pos + 40)}`);
    pos += open[0].length;
    const attrs: Record<string, string> = {};
    for (const m of open[2]!.matchAll(/([\w:.-]+)="([^"]*)"/g)) attrs[m[1]!] = decode(m[2]!);
    const el: XmlElement = { name: open[1]!, attrs, children: [], text: '' };
    if (open[3]) return el;
    for (;;) {
      const lt = doc.indexOf('<', pos);
      if (lt < 0) throw new Error(`unclosed <${el.name}>`);
      const raw = doc.slice(pos, lt);
      if (/[<>]|&(?!(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);)/i.test(raw))
        throw new Error(`bad text in <${el.name}>: ${raw}`);
      el.text += decode(raw);
      pos = lt;
      if (doc.startsWith(`</${el.name}>`, pos)) {
        pos += el.name.length + 3;
        return el;
      }
      if (doc.startsWith('</', pos)) throw new Error(`mismatched close at ${pos}: expected </${el.name}>`);
      el.children.push(element());
    }
  };
  const root = element();
  if (doc.slice(pos).trim() !== '') throw new Error('content after the root element');
  return root;
}

/** The sandbox's XML conventions read back: nil → null, `Item` children → array, leaves → text. */
export function xmlValue(el: XmlElement): unknown {
  if (el.attrs['xsi:nil'] === 'true') return null;
  if (el.children.length === 0) return el.text;
  if (el.children.every((c) => c.name === 'Item')) return el.children.map(xmlValue);
  return Object.fromEntries(el.children.map((c) => [c.name, xmlValue(c)]));
}

/** A JSON value as it reads back from XML: scalars as text, empty lists and objects as empty text. */
export function asXmlReads(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.length === 0 ? '' : value.map(asXmlReads);
  if (typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '';
    return Object.fromEntries(entries.map(([k, v]) => [k.replace(/[^A-Za-z0-9_.-]/g, '_'), asXmlReads(v)]));
  }
  return String(value);
}
