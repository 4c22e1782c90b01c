import type { Endpoint, Scope } from '../source/endpoints.ts';
import { endpoints } from '../resources/index.ts';

/** An API key the sandbox accepts, with the scopes it carries (service-spec.md, "Authentication"). */
export interface ApiKey {
  key: string;
  scopes: Scope[];
}

export const DEFAULT_API_KEY = 'sandbox-key';

/** The scopes the catalog uses; the spec's scope-to-endpoint mapping lives there and only there. */
export const SCOPES: readonly Scope[] = [
  ...new Set(Object.values(endpoints as Record<string, Endpoint>).flatMap((e) => (e.scope ? [e.scope] : []))),
];

export function defaultKeys(): ApiKey[] {
  return [{ key: DEFAULT_API_KEY, scopes: [...SCOPES] }];
}

function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

/** `KEY` (every scope) or `KEY:scope,scope`. */
export function parseKeySpec(text: string): ApiKey {
  const colon = text.indexOf(':');
  const key = colon < 0 ? text : text.slice(0, colon);
  if (!/^[\x21-\x7e]+$/.test(key))
    throw new Error(`--key: expected KEY[:scope,scope] with a printable key, got "${text}"`);
  if (colon < 0) return { key, scopes: [...SCOPES] };
  const scopes = text
    .slice(colon + 1)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new Error(`--key: unknown scope "${unknown[0]}" (scopes: ${SCOPES.join(', ')})`);
  return { key, scopes: scopes as Scope[] };
}

/** Looks up keys by value; a key's scopes decide which catalog endpoints it may call. */
export class KeyRing {
  readonly #keys: Map<string, ReadonlySet<Scope>>;

  constructor(keys: readonly ApiKey[]) {
    if (keys.length === 0) throw new Error('the sandbox needs at least one API key');
    this.#keys = new Map(keys.map((k) => [k.key, new Set(k.scopes)]));
  }

  /** Keys revoked while the sandbox runs (a rotation's old key), with the requests refused for each since. */
  readonly #revoked = new Map<string, number>();

  has(key: string | undefined): key is string {
    if (key !== undefined && this.#revoked.has(key)) {
      this.#revoked.set(key, this.#revoked.get(key)! + 1);
      return false;
    }
    return key !== undefined && this.#keys.has(key);
  }

  /** Refuses `key` from now on, as the service does once a company's key is replaced. */
  revoke(key: string): boolean {
    if (!this.#keys.has(key)) return false;
    if (!this.#revoked.has(key)) this.#revoked.set(key, 0);
    return true;
  }

  /** Each revoked key's requests refused since it was revoked. */
  refusedSinceRevoked(): Record<string, number> {
    return Object.fromEntries(this.#revoked);
  }

  allows(key: string, endpoint: Endpoint): boolean {
    return endpoint.scope === undefined || this.#keys.get(key)?.has(endpoint.scope) === true;
  }

  get first(): string {
    return this.#keys.keys().next().value as string;
  }

  keys(): string[] {
    return [...this.#keys.keys()];
  }
}
