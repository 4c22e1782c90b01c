/**
 * A small XML serializer for the `text/xml` format (service-spec.md, "Versioning": `.xml` suffix or Accept).
 * Objects become elements named after their keys; an array becomes an element holding one repeated `<Item>`
 * per entry (so an empty or one-entry list stays a list); null becomes an empty element marked `xsi:nil`.
 */

export const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
export const ITEM = 'Item';
export const ROOT = 'Response';

// Characters XML 1.0 cannot carry at all, lone surrogates included.
const INVALID_CHARS =
  /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPED = /[&<>"'\r]/g;
const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  // A raw CR would be normalized to LF by every parser; the spec's comment answers keep CRLF.
  '\r': '&#13;',
};

export function escapeText(text: string): string {
  return text.replace(INVALID_CHARS, '').replace(ESCAPED, (c) => ENTITIES[c]!);
}

const nameCache = new Map<string, string>();

/** Keys such as `Shift Name` are not XML names: invalid characters become `_`. */
export function elementName(key: string): string {
  let name = nameCache.get(key);
  if (name === undefined) {
    name = key.replace(/[^A-Za-z0-9_.\-\u00C0-\uFFEF]/g, '_');
    if (!/^[A-Za-z_\u00C0-\uFFEF]/.test(name)) name = `_${name}`;
    if (nameCache.size < 10_000) nameCache.set(key, name);
  }
  return name;
}

function scalar(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return escapeText(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isFinite(value) ? String(value) : undefined;
    case 'bigint':
      return String(value);
    default:
      return value instanceof Date ? value.toISOString() : undefined;
  }
}

function write(out: string[], name: string, value: unknown): void {
  if (value === null || value === undefined) {
    out.push(`<${name} xsi:nil="true"/>`);
    return;
  }
  const text = scalar(value);
  if (text !== undefined) {
    out.push(`<${name}>${text}</${name}>`);
    return;
  }
  if (typeof value !== 'object') {
    out.push(`<${name} xsi:nil="true"/>`);
    return;
  }
  out.push(`<${name}>`);
  if (Array.isArray(value)) {
    for (const item of value) write(out, ITEM, item);
  } else {
    for (const [k, v] of Object.entries(value)) write(out, elementName(k), v);
  }
  out.push(`</${name}>`);
}

/** One element, as a fragment to place inside a document made by `xmlDocument`. */
export function xmlElement(name: string, value: unknown): string {
  const out: string[] = [];
  write(out, elementName(name), value);
  return out.join('');
}

/** The children of an element for `value` (its fields, or its items, or its text). */
export function xmlContent(value: unknown): string {
  const element = xmlElement(ROOT, value);
  if (element.endsWith('/>')) return '';
  return element.slice(ROOT.length + 2, element.length - ROOT.length - 3);
}

/** A complete document whose root holds `inner` (already serialized), or is nil. */
export function xmlDocument(inner: string | null): string {
  const head = `<?xml version="1.0" encoding="utf-8"?>`;
  if (inner === null) return `${head}<${ROOT} xmlns:xsi="${XSI}" xsi:nil="true"/>`;
  return `${head}<${ROOT} xmlns:xsi="${XSI}">${inner}</${ROOT}>`;
}

export function toXml(value: unknown): string {
  return xmlDocument(value === null || value === undefined ? null : xmlContent(value));
}
