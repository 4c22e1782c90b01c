/**
 * Hostile input for HTTP servers: values for path segments and query parameters, bodies, and what no answer may
 * hold (stack frames, SQL and driver messages, reflected markup).
 */

/** Markup that would run if reflected unescaped into a page. */
export const XSS = '<script>wfsXss()</script>"><img src=x onerror=wfsXss()>';

/** Values for any path parameter or query parameter, as text (encoded with encodeURIComponent). */
export const HOSTILE_VALUES: readonly string[] = [
  '99999999999999999999999999',
  '9223372036854775808',
  '1e400',
  '-1',
  '0',
  '1.5',
  'NaN',
  'Infinity',
  '0x10',
  "1' OR '1'='1",
  "'; drop table push_outbox; --",
  XSS,
  '\u0000',
  '../../../../etc/passwd',
  'x'.repeat(1000),
  '\r\nX-Injected: yes',
  '{"$gt":""}',
  'ünïcødé ✓ 🦆',
];

/** Path segments and query values already percent-encoded, including encodings that are not valid UTF-8. */
export const HOSTILE_ENCODED: readonly string[] = ['%ED%A0%80', '%', '%zz', '%C0%AF', '%0d%0aX-Injected:%20yes'];

export interface HostileBody {
  name: string;
  body: string | Uint8Array;
  type?: string;
}

const bytes = new Uint8Array(4096).map((_, i) => (i * 7919) % 256);

export const HOSTILE_BODIES: readonly HostileBody[] = [
  { name: 'malformed JSON', body: '{"FirstName":', type: 'application/json' },
  { name: 'deeply nested arrays', body: `${'['.repeat(100_000)}${']'.repeat(100_000)}`, type: 'application/json' },
  { name: 'deeply nested objects', body: `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`, type: 'application/json' },
  {
    name: 'a change nested deep in a field',
    body: JSON.stringify([{ changeId: 'deep', FirstName: JSON.parse(`${'['.repeat(50)}"x"${']'.repeat(50)}`) }]),
    type: 'application/json',
  },
  {
    name: 'wrong-typed fields',
    body: JSON.stringify([
      {
        FirstName: 123,
        LastName: [],
        Status: {},
        changeId: 5,
        company: null,
        SSN: true,
        ServiceId: '1e400',
        IsVerified: 'yes',
      },
    ]),
    type: 'application/json',
  },
  { name: 'JSON scalar', body: '"a change"', type: 'application/json' },
  { name: 'JSON null', body: 'null', type: 'application/json' },
  { name: 'empty body', body: '', type: 'application/json' },
  {
    name: 'NUL and a lone surrogate',
    body: '[{"changeId":"nul","FirstName":"a\\u0000b","LastName":"\\ud800"}]',
    type: 'application/json',
  },
  { name: 'NDJSON with a broken line', body: '{}\n{"FirstName"\n', type: 'application/x-ndjson' },
  {
    name: 'more changes than allowed',
    body: JSON.stringify(Array.from({ length: 10_001 }, () => ({}))),
    type: 'application/json',
  },
  {
    name: 'malformed multipart',
    body: '--x\r\nContent-Disposition: form-data; name="token"\r\n\r\nabc',
    type: 'multipart/form-data; boundary=x',
  },
  { name: 'multipart without a boundary', body: 'token=abc', type: 'multipart/form-data' },
  {
    name: 'form of injection strings',
    body: new URLSearchParams({
      token: "' OR 1=1 --",
      company: "north'; drop table sync_runs; --",
      stream: XSS,
      id: '1e400',
      before: '-1',
    }).toString(),
    type: 'application/x-www-form-urlencoded',
  },
  {
    name: 'form with repeated fields',
    body: 'id=1&id=2&company=north&company=x&stream=a&stream=b&token=a&token=b',
    type: 'application/x-www-form-urlencoded',
  },
  { name: 'binary', body: bytes, type: 'application/octet-stream' },
  {
    name: 'a personal-data policy of unknown fields and actions',
    body: JSON.stringify({
      "FirstName'; drop table individuals; --": 'hash',
      PrimaryEmailAddress: "block'); --",
      DateOfBirth: 'hash',
      LastName: { $gt: '' },
    }),
    type: 'application/json',
  },
  {
    name: 'an erasure naming nobody',
    body: JSON.stringify({ serviceId: 1e300, employeeNumber: { $gt: '' }, requestedBy: XSS }),
    type: 'application/json',
  },
  {
    name: 'JSON that SQL would choke on',
    body: JSON.stringify([
      { changeId: "x'); delete from push_outbox; --", FirstName: "Robert'); DROP TABLE individuals;--" },
    ]),
    type: 'application/json',
  },
];

/** What no answer may hold: stack frames, driver and SQL messages, parser internals. */
export const LEAKS =
  /invalid input syntax|\bbigint\b|syntax|postgres|\bSQL\b|violates|relation "|column "|TypeError|RangeError|ReferenceError|\n\s+at \S|\bat \S+ \(|node_modules|\.[tj]s:\d+|Failed to parse|Unexpected token/i;

/** Where markup was reflected unescaped. */
export const REFLECTED = /<script>wfsXss|<img src=x onerror/i;

/** Fills a hono route path (`/a/:id{[0-9]+}/*`) with one value for every parameter and wildcard. */
export function fillPath(path: string, encoded: string): string {
  return path.replace(/:[A-Za-z0-9_]+(\{[^}]*\})?\??/g, encoded).replace(/\*/g, encoded);
}
