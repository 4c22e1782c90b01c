/** Reading a record's fields by dotted path (`Employee.ServiceId`). */

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

export function getPath(item: unknown, path: string): unknown {
  return atPath(item, splitPath(path));
}

export function atPath(item: unknown, parts: readonly string[]): unknown {
  let v: unknown = item;
  for (let i = 0; i < parts.length; i++) v = isPlainObject(v) ? v[parts[i]!] : undefined;
  return v;
}

// Key field paths repeat on every item: split each once.
const pathParts = new Map<string, readonly string[]>();
export function splitPath(path: string): readonly string[] {
  let parts = pathParts.get(path);
  if (!parts) pathParts.set(path, (parts = path.split('.')));
  return parts;
}
