import { createHash } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { SourceClient, type SourceClientOptions } from '../../src/source/client.ts';
import { endpoints } from '../../src/resources/index.ts';
import { SourceError } from '../../src/source/errors.ts';
import {
  capturingLogger,
  collect,
  envelope,
  fakeService,
  json,
  RecordingLimiter,
  type FakeService,
  type Handler,
} from './helpers.ts';

const KEY = 'key-7f3a9c';
const fast = { baseMs: 1, capMs: 5 };

let service: FakeService | undefined;
let client: SourceClient | undefined;

afterEach(async () => {
  await client?.close();
  await service?.close();
  client = service = undefined;
});

async function setup(handler: Handler, opts: Partial<SourceClientOptions> = {}) {
  service = await fakeService(handler);
  const limiter = new RecordingLimiter();
  client = new SourceClient({
    baseUrl: service.url,
    apiKey: KEY,
    limiter,
    backoff: fast,
    logger: capturingLogger().logger,
    ...opts,
  });
  return { service, client, limiter };
}

async function failure(p: Promise<unknown>): Promise<SourceError> {
  const e = await p.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SourceError);
  return e as SourceError;
}

const pending = (id: number) => ({ IndividualCertificationId: id, ServiceId: 1000 + id });

describe('requests', () => {
  it('carries api-version, the key header and Accept on every request, over one kept-alive connection', async () => {
    const { service, client } = await setup(
      (_req, res) => json(res, 200, [{ CertificationId: 1, CertificationName: 'BLS' }]),
      {
        connections: 1,
      },
    );
    for (let i = 0; i < 3; i++) await client.all(endpoints.certifications, {});
    expect(service.seen).toHaveLength(3);
    for (const s of service.seen) {
      expect(s.path).toBe('/Certification/GetCertificationList');
      expect(s.query.get('api-version')).toBe('2.0');
      expect(s.headers['authorization-token']).toBe(KEY);
      expect(s.headers.accept).toBe('application/json');
    }
    expect(service.connections()).toBe(1);
  });

  it('keeps a path prefix of the base URL', async () => {
    const { service } = await setup((_req, res) => json(res, 200, []));
    await client!.close();
    client = new SourceClient({ baseUrl: `${service.url}/api/`, apiKey: KEY, limiter: new RecordingLimiter() });
    await client.all(endpoints.locales, {});
    expect(service.seen[0]!.path).toBe('/api/Locale/GetList');
  });

  it('sends a + in a date-time offset as %2B, and formats Dates, dates, booleans and lists by the catalog', async () => {
    const { service, client } = await setup((_req, res) => json(res, 200, envelope([], false, 0)));
    await client.all(endpoints.timeOffRequests, {
      StartDateTime: '2024-03-01T00:00:00+02:00',
      EndDateTime: new Date(Date.UTC(2024, 2, 31, 22, 30)),
      RequestStatus: ['Pending', 'Approved'],
    });
    await client.all(endpoints.individualCertifications, {
      updatedSince: new Date(Date.UTC(2024, 0, 5, 23)),
      IncludeDeleted: true,
    });
    const [timeOff, certs] = service.seen;
    expect(timeOff!.rawQuery).toContain('StartDateTime=2024-03-01T00%3A00%3A00%2B02%3A00');
    expect(timeOff!.rawQuery).not.toContain('+');
    expect(timeOff!.query.get('StartDateTime')).toBe('2024-03-01T00:00:00+02:00');
    expect(timeOff!.query.get('EndDateTime')).toBe('2024-03-31T22:30:00+00:00');
    expect(timeOff!.query.get('RequestStatus')).toBe('Pending,Approved');
    expect(timeOff!.query.get('Offset')).toBe('0');
    expect(timeOff!.query.get('Limit')).toBe('200');
    expect(certs!.query.get('updatedSince')).toBe('2024-01-05');
    expect(certs!.query.get('IncludeDeleted')).toBe('true');
    expect(certs!.query.has('primaryOnly')).toBe(false);
  });

  it('refuses an unknown query key, naming it, before any request or limiter call', async () => {
    const { service, client, limiter } = await setup((_req, res) => json(res, 200, []));
    const e = await failure(client.all(endpoints.individuals, { ExcludeStatus: 'Former' } as never));
    expect(e.kind).toBe('bad_request');
    expect(e.message).toContain('ExcludeStatus');
    expect(service.seen).toHaveLength(0);
    expect(limiter.acquired).toHaveLength(0);
  });

  it('refuses bad values before any request: missing required, wrong type, unknown list value, page controls, a range over 31 days', async () => {
    const { service, client } = await setup((_req, res) => json(res, 200, []));
    const cases: [Promise<unknown>, string][] = [
      [client.all(endpoints.shiftAssignments, { StartDate: '2024-01-01T00:00:00Z' } as never), 'EndDate is required'],
      [client.lookup(endpoints.individualByServiceId, { serviceId: 1.5 }), 'serviceId must be an integer'],
      [client.all(endpoints.individuals, { ExcludeStatuses: ['Retired'] }), 'Retired'],
      [client.all(endpoints.pendingCertifications, { Offset: 10 } as never), 'Offset is a page control'],
      [
        client.all(endpoints.individualCourses, { startDate: '2024-01-01', endDate: '2024-02-15', statusOption: 0 }),
        '31 days',
      ],
      [
        client.all(endpoints.individualCourses, { startDate: '2024-01-01', endDate: '2024-01-15', statusOption: 7 }),
        'statusOption',
      ],
      [
        client.all(endpoints.runLogFormResponses, {
          RunTypeId: 1,
          FormType: 'Other',
          StartDate: new Date(),
          EndDate: new Date(),
        }),
        'FormType',
      ],
    ];
    for (const [p, text] of cases) expect((await failure(p)).message).toContain(text);
    expect(service.seen).toHaveLength(0);
  });

  it('waits for the limiter with the lane asked for (incremental by default) under the hash of the key', async () => {
    const { client, limiter } = await setup((_req, res) => json(res, 200, []));
    await client.all(endpoints.locales, {});
    await client.all(endpoints.locales, {}, { lane: 'backfill' });
    const hash = createHash('sha256').update(KEY).digest('hex').slice(0, 24);
    expect(client.limiterKey).toBe(hash);
    expect(limiter.acquired).toEqual([
      { key: hash, lane: 'incremental' },
      { key: hash, lane: 'backfill' },
    ]);
  });

  it('tells the limiter the rate-limit headers of every response, fractional reset seconds included', async () => {
    const { client, limiter } = await setup((_req, res, n) =>
      json(res, 200, [], n === 1 ? { 'x-ratelimit-remaining': '42', 'x-ratelimit-reset': '1700000060.5' } : {}),
    );
    await client.all(endpoints.locales, {});
    await client.all(endpoints.locales, {});
    expect(limiter.observed).toEqual([
      { key: client.limiterKey, feedback: { remaining: 42, resetAtMs: 1_700_000_060_500 } },
    ]);
  });

  it('reads the service clock from the Date header', async () => {
    const { client } = await setup((_req, res) => json(res, 200, [], { date: 'Mon, 01 Jan 2035 00:00:00 GMT' }));
    await client.all(endpoints.locales, {});
    expect(Math.abs(client.serviceNow().getTime() - Date.UTC(2035, 0, 1))).toBeLessThan(60_000);
  });
});

describe('paging', () => {
  const items = Array.from({ length: 7 }, (_, i) => pending(i + 1));
  const paged: Handler = (req, res) => {
    const offset = Number(req.query.get('Offset'));
    const limit = Number(req.query.get('Limit'));
    const data = items.slice(offset, offset + limit);
    json(res, 200, envelope(data, offset + limit < items.length, offset));
  };

  it('streams envelopes page by page and stops on HasMoreResults false without one request more', async () => {
    const { service, client } = await setup(paged);
    const offsets: number[] = [];
    for await (const page of client.pages(endpoints.pendingCertifications, {}, { pageSize: 3 })) {
      // The next page is on its way while this one is handed out; none is asked for past the end.
      expect(service.seen.length).toBeLessThanOrEqual(offsets.length + 2);
      offsets.push(page.offset);
    }
    expect(offsets).toEqual([0, 3, 6]);
    expect(service.seen.map((s) => [s.query.get('Offset'), s.query.get('Limit')])).toEqual([
      ['0', '3'],
      ['3', '3'],
      ['6', '3'],
    ]);
  });

  it('stops on an exactly full last page when the service says no more', async () => {
    const { service, client } = await setup(paged);
    const all = await client.all(endpoints.pendingCertifications, {}, { pageSize: 7 });
    expect(all.items.map((i) => i.IndividualCertificationId)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(service.seen).toHaveLength(1);
  });

  it('starts at startOffset and advances by what a page held', async () => {
    const { service, client } = await setup((req, res) => {
      const offset = Number(req.query.get('Offset'));
      // The service hands out 2 per page whatever Limit says.
      json(res, 200, envelope(items.slice(offset, offset + 2), offset + 2 < items.length, offset));
    });
    const all = await client.all(endpoints.pendingCertifications, {}, { startOffset: 2, pageSize: 5 });
    expect(all.items.map((i) => i.IndividualCertificationId)).toEqual([3, 4, 5, 6, 7]);
    expect(service.seen.map((s) => s.query.get('Offset'))).toEqual(['2', '4', '6']);
  });

  describe('read ahead', () => {
    const many = Array.from({ length: 161 }, (_, i) => pending(i + 1));
    const pagedMany: Handler = (req, res) => {
      const offset = Number(req.query.get('Offset'));
      const limit = Number(req.query.get('Limit'));
      json(res, 200, envelope(many.slice(offset, offset + limit), offset + limit < many.length, offset));
    };

    it('reads a long list several pages at once, hands pages out in order, and asks for at most a few past its end', async () => {
      const { service, client } = await setup(pagedMany);
      const offsets: number[] = [];
      let most = 0;
      for await (const page of client.pages(endpoints.pendingCertifications, {}, { pageSize: 2, readAhead: 4 })) {
        offsets.push(page.offset);
        // The page is written meanwhile.
        await new Promise((r) => setTimeout(r, 5));
        // Pages asked for but not handed out yet.
        most = Math.max(most, service.seen.length - offsets.length);
      }
      expect(offsets).toEqual(Array.from({ length: 81 }, (_, i) => i * 2));
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(4);
      // Pages past the end (161 records: offsets 162 and on) are at most readAhead - 1.
      const past = service.seen.filter((s) => Number(s.query.get('Offset')) >= 162);
      expect(past.length).toBeLessThanOrEqual(3);
      expect(service.seen.length).toBe(81 + past.length);
    });

    it('asks for nothing past the end of a list of up to 64 pages', async () => {
      const { service, client } = await setup(pagedMany);
      const all = await client.all(endpoints.pendingCertifications, {}, { pageSize: 3, readAhead: 4 });
      expect(all.items).toHaveLength(161);
      expect(service.seen.map((s) => Number(s.query.get('Offset')))).toEqual(
        Array.from({ length: 54 }, (_, i) => i * 3),
      );
    });

    it('never sends a page asked for ahead that still waits for the limiter when the list ends', async () => {
      const { service } = await setup(pagedMany);
      await client!.close();
      // A limiter that lets one request start at a time, 5 ms apart, in the order asked.
      let last = Promise.resolve();
      const acquired: string[] = [];
      const slow = new RecordingLimiter();
      slow.acquire = (key, _lane, signal) => {
        const mine = last.then(async () => {
          signal?.throwIfAborted();
          await new Promise((r) => setTimeout(r, 5));
          signal?.throwIfAborted();
          acquired.push(key);
        });
        last = mine.catch(() => undefined);
        return mine;
      };
      client = new SourceClient({
        baseUrl: service.url,
        apiKey: KEY,
        limiter: slow,
        backoff: fast,
        logger: capturingLogger().logger,
      });
      const all = await client.all(endpoints.pendingCertifications, {}, { pageSize: 1, readAhead: 8 });
      expect(all.items).toHaveLength(161);
      await new Promise((r) => setTimeout(r, 300));
      expect(service.seen.length).toBe(acquired.length);
      expect(service.seen.length - 161).toBeLessThanOrEqual(1);
    });

    it('goes on from where a short page ended, dropping the pages it asked for ahead', async () => {
      const { client } = await setup((req, res) => {
        const offset = Number(req.query.get('Offset'));
        // Full pages of 2 up to offset 100, then the service hands out 1 per page.
        const n = offset < 100 ? 2 : 1;
        json(res, 200, envelope(many.slice(offset, offset + n), offset + n < many.length, offset));
      });
      const all = await client.all(endpoints.pendingCertifications, {}, { pageSize: 2, readAhead: 4 });
      expect(all.items.map((i) => i.IndividualCertificationId)).toEqual(many.map((i) => i.IndividualCertificationId));
    });
  });

  it('reads the Results count variant and passes FormId and FormTitle through as extras', async () => {
    const { client } = await setup((_req, res) =>
      json(res, 200, {
        HasMoreResults: false,
        Offset: 0,
        Results: 1,
        FormId: 12,
        FormTitle: 'Daily check',
        Data: [{ ResponseId: 5 }],
      }),
    );
    const [page] = await collect(
      client.pages(endpoints.formResponses, { FormId: 12, StartDate: '2024-01-01', EndDate: '2024-01-31' }),
    );
    expect(page!.items.map((i) => i.ResponseId)).toEqual([5]);
    expect(page!.extras).toEqual({ FormId: 12, FormTitle: 'Daily check' });
  });

  it('fails as schema rather than loop when HasMoreResults is true on an empty page', async () => {
    const { service, client } = await setup((_req, res) => json(res, 200, envelope([], true, 0)));
    expect((await failure(client.all(endpoints.pendingCertifications, {}))).kind).toBe('schema');
    expect(service.seen).toHaveLength(1);
  });

  it('yields a plain array as one page', async () => {
    const { client } = await setup((_req, res) =>
      json(res, 200, [
        { IndividualId: 1, ServiceId: 11 },
        { IndividualId: 2, ServiceId: 12 },
      ]),
    );
    const pages = await collect(client.pages(endpoints.individuals, { ExcludeStatuses: 'Former' }));
    expect(pages).toHaveLength(1);
    expect(pages[0]!).toMatchObject({ offset: 0, hasMore: false, rejects: [] });
    expect(pages[0]!.items.map((i) => i.ServiceId)).toEqual([11, 12]);
  });

  it('reads a reference list sent as an array, as an object holding Data, or as one object', async () => {
    const bodies = [
      [
        { LocaleId: 1, LocaleName: 'North' },
        { LocaleId: 2, LocaleName: 'South' },
      ],
      { Data: [{ LocaleId: 3, LocaleName: 'East' }] },
      { LocaleId: 4, LocaleName: 'West' },
    ];
    const { client } = await setup((_req, res, n) => json(res, 200, bodies[n - 1]));
    const ids: number[][] = [];
    for (let i = 0; i < bodies.length; i++)
      ids.push((await client.all(endpoints.locales, {})).items.map((l) => l.LocaleId));
    expect(ids).toEqual([[1, 2], [3], [4]]);
  });

  it('rejects a record that fails its schema with its path, and keeps the rest of the page', async () => {
    const { client } = await setup((_req, res) =>
      json(res, 200, envelope([pending(1), { IndividualCertificationId: 'two', ServiceId: 1 }, pending(3)], false, 0)),
    );
    const page = await client.all(endpoints.pendingCertifications, {});
    expect(page.items.map((i) => i.IndividualCertificationId)).toEqual([1, 3]);
    expect(page.rejects).toHaveLength(1);
    expect(page.rejects[0]!.raw).toEqual({ IndividualCertificationId: 'two', ServiceId: 1 });
    expect(page.rejects[0]!.reason).toMatch(/^IndividualCertificationId: .*expected number/);
  });

  it('reads a list answered in another shape than documented, and warns once per endpoint', async () => {
    const bodies = [
      { ShiftAssignmentId: 1, StartDateTime: '2024-06-01T07:00:00-05:00' },
      [{ ShiftAssignmentId: 2, StartDateTime: '2024-06-01T07:00:00-05:00' }],
    ];
    service = await fakeService((_req, res, n) => json(res, 200, bodies[n - 1]));
    const log = capturingLogger();
    client = new SourceClient({
      baseUrl: service.url,
      apiKey: KEY,
      limiter: new RecordingLimiter(),
      backoff: fast,
      logger: log.logger,
    });
    const query = { StartDate: new Date('2024-06-01T00:00:00Z'), EndDate: new Date('2024-06-02T00:00:00Z') };
    const first = await collect(client.pages(endpoints.shiftAssignments, query));
    const second = await collect(client.pages(endpoints.shiftAssignments, query));
    expect([...first, ...second].map((p) => [p.items.map((i) => i.ShiftAssignmentId), p.hasMore])).toEqual([
      [[1], false],
      [[2], false],
    ]);
    const warnings = log.lines.filter((l) => l.includes('another shape than documented'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('a single object where a list is expected');
  });

  it('answers schema when the container is not what the endpoint returns', async () => {
    const { client } = await setup((_req, res) => json(res, 200, { Data: 'nope' }));
    expect((await failure(client.all(endpoints.individuals, {}))).kind).toBe('schema');
    expect((await failure(client.all(endpoints.pendingCertifications, {}))).kind).toBe('schema');
  });
});

describe('errors', () => {
  const answer =
    (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
    (_req, res) =>
      json(res, status, body, headers);

  it('maps statuses to kinds and never retries 400, 401, 403 scope, 404 or 406', async () => {
    const cases: [number, unknown, string, string][] = [
      [
        400,
        { error: 'invalid_parameters', error_message: 'StartDate is invalid' },
        'bad_request',
        'invalid_parameters',
      ],
      [401, { error: 'unauthorized', error_message: 'key not valid for this service' }, 'auth', 'unauthorized'],
      [
        403,
        { error: 'insufficient_scope', error_message: 'scope certifications required' },
        'scope',
        'insufficient_scope',
      ],
      [403, { error: 'invalid_scope', error_message: 'no such scope' }, 'scope', 'invalid_scope'],
      [404, { error: 'not_found', error_message: 'no such path' }, 'not_found', 'not_found'],
      [406, { error: 'not_acceptable', error_message: 'unknown format' }, 'not_acceptable', 'not_acceptable'],
    ];
    for (const [status, body, kind, code] of cases) {
      const { service, client } = await setup(answer(status, body));
      const e = await failure(client.all(endpoints.pendingCertifications, {}));
      expect([e.kind, e.status, e.code, e.retryable]).toEqual([kind, status, code, false]);
      expect(e.message).toContain((body as { error_message: string }).error_message);
      expect(service.seen).toHaveLength(1);
      await client.close();
      await service.close();
    }
    client = service = undefined;
  });

  it('reads the Message/Errors body shape into message and fields', async () => {
    const { client } = await setup(
      answer(400, { Message: 'The request is invalid.', Errors: { Error: 'First name cannot be empty' } }),
    );
    const e = await failure(
      client.send(endpoints.individualUpdate, {
        ServiceId: 1,
        FirstName: 'A',
        LastName: 'B',
        Status: 'Active',
        PrimaryEmailAddress: 'a@b.co',
      }),
    );
    expect(e.kind).toBe('bad_request');
    expect(e.message).toContain('The request is invalid.');
    expect(e.message).toContain('First name cannot be empty');
    expect(e.fields).toEqual({ Error: 'First name cannot be empty' });
  });

  it('treats a 304 on a write as the error the spec says it is', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(304);
      res.end();
    });
    const e = await failure(client.send(endpoints.certificationUpdate, { IndividualCertificationId: 9 }));
    expect([e.kind, e.code]).toEqual(['bad_request', 'not_modified']);
  });

  it('answers found:false for a 404 lookup, and the item or the boolean otherwise', async () => {
    const { client } = await setup((req, res) => {
      if (req.path.endsWith('/Exists')) return json(res, 200, req.query.get('uniqueIdentifier') === 'U1');
      if (req.query.get('serviceId') === '1')
        return json(res, 200, { IndividualId: 5, ServiceId: 1, Supervisor: 'Doe, Jane' });
      json(res, 404, { error: 'not_found', error_message: 'individual does not exist' });
    });
    expect(await client.lookup(endpoints.individualByServiceId, { serviceId: 2 })).toEqual({ found: false });
    const hit = await client.lookup(endpoints.individualByServiceId, { serviceId: 1 });
    expect(hit.found && hit.item.SupervisorName).toBe('Doe, Jane');
    expect(await client.lookup(endpoints.individualExists, { uniqueIdentifier: 'U1' })).toEqual({
      found: true,
      item: true,
    });
    expect(await client.lookup(endpoints.individualExists, { uniqueIdentifier: 'U2' })).toEqual({
      found: true,
      item: false,
    });
  });
});

describe('retries', () => {
  it('retries 5xx with backoff until success', async () => {
    const { service, client } = await setup((_req, res, n) =>
      n <= 3
        ? json(res, 500, { error: 'internal_server_error', error_message: 'boom' })
        : json(res, 200, envelope([pending(1)], false, 0)),
    );
    const all = await client.all(endpoints.pendingCertifications, {});
    expect(all.items).toHaveLength(1);
    expect(service.seen).toHaveLength(4);
    expect(client.stats()).toMatchObject({ requests: 4, retries: 3 });
  });

  it('gives up after maxRetries with the last error', async () => {
    const { service, client } = await setup(
      (_req, res) => json(res, 503, { error: 'internal_server_error', error_message: 'down' }),
      {
        maxRetries: 2,
      },
    );
    const e = await failure(client.all(endpoints.locales, {}));
    expect([e.kind, e.status]).toEqual(['server', 503]);
    expect(service.seen).toHaveLength(3);
  });

  it('retries a reset connection and a body cut short', async () => {
    const { service, client } = await setup((_req, res, n) => {
      if (n === 1) return res.socket!.destroy();
      if (n === 2) {
        // Promises 500 bytes, sends 20, hangs up.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('{"HasMoreResults":fa');
        return setTimeout(() => res.socket!.destroy(), 10);
      }
      if (n === 3) {
        // A complete HTTP message whose JSON was cut before it was sent.
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"HasMoreResults":false,"Data":[{"Indiv');
      }
      json(res, 200, envelope([pending(1)], false, 0));
    });
    expect((await client.all(endpoints.pendingCertifications, {})).items).toHaveLength(1);
    expect(service.seen).toHaveLength(4);
  });

  describe('a plain-array list read as it arrives', () => {
    const people = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ IndividualId: i + 1, ServiceId: 10_000 + i, FirstName: `Zoë ${i}` }));

    /** Sends `text` in small writes, as a slow network does; cut short after `upTo` bytes when given. */
    const dribble = (res: import('node:http').ServerResponse, text: string, upTo?: number) => {
      const bytes = Buffer.from(text);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes.length) });
      const end = upTo ?? bytes.length;
      for (let i = 0; i < end; i += 4093) res.write(bytes.subarray(i, Math.min(i + 4093, end)));
      if (upTo === undefined) res.end();
      else setTimeout(() => res.socket!.destroy(), 20);
    };

    it('comes in pages of at most 1,000 records, hasMore false on the last only, from one request', async () => {
      const list = people(2500);
      const { service, client } = await setup((_req, res) => dribble(res, JSON.stringify(list)));
      const pages = await collect(client.pages(endpoints.individuals, {}));
      expect(pages.map((p) => [p.offset, p.items.length, p.hasMore])).toEqual([
        [0, 1000, true],
        [1000, 1000, true],
        [2000, 500, false],
      ]);
      expect(pages.flatMap((p) => p.items.map((i) => i.ServiceId))).toEqual(list.map((p) => p.ServiceId));
      expect(pages[2]!.items[499]!.FirstName).toBe('Zoë 2499');
      expect(service.seen).toHaveLength(1);
    });

    it('an exactly full last page still says it is the last', async () => {
      const { client } = await setup((_req, res) => dribble(res, JSON.stringify(people(1000))));
      expect((await collect(client.pages(endpoints.individuals, {}))).map((p) => [p.items.length, p.hasMore])).toEqual([
        [1000, false],
      ]);
    });

    it('broken off after pages were handed out, is read again from its start and ends complete', async () => {
      const list = people(2500);
      const text = JSON.stringify(list);
      const { service, client } = await setup((_req, res, n) =>
        dribble(res, text, n === 1 ? Math.floor(text.length * 0.9) : undefined),
      );
      const pages = await collect(client.pages(endpoints.individuals, {}));
      // Two pages of the first read, then the whole list again: nothing skipped, the last page last.
      expect(pages.map((p) => [p.offset, p.items.length, p.hasMore])).toEqual([
        [0, 1000, true],
        [1000, 1000, true],
        [0, 1000, true],
        [1000, 1000, true],
        [2000, 500, false],
      ]);
      expect(service.seen).toHaveLength(2);
      expect(client.stats().retries).toBe(1);
    });

    it('cut short on every try: a network error once retries run out', async () => {
      const { service, client } = await setup((_req, res) => dribble(res, JSON.stringify(people(1500)), 9000), {
        maxRetries: 2,
      });
      const err = await failure(collect(client.pages(endpoints.individuals, {})));
      expect(err.kind).toBe('network');
      expect(service.seen).toHaveLength(3);
    });

    it('a complete message whose list is cut is a truncated body', async () => {
      const { client } = await setup(
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('[{"IndividualId":1,"ServiceId":2},{"Indiv');
        },
        { maxRetries: 0 },
      );
      const err = await failure(collect(client.pages(endpoints.individuals, {})));
      expect(err).toMatchObject({ kind: 'network', code: 'TRUNCATED_BODY' });
    });
  });

  it('reports a reset as network and a cut body as network when retries run out', async () => {
    const { client } = await setup((_req, res) => res.socket!.destroy(), { maxRetries: 0 });
    expect((await failure(client.all(endpoints.locales, {}))).kind).toBe('network');
  });

  it('times out a request that does not answer in time, and retries it', async () => {
    const { service, client } = await setup(
      (_req, res, n) => {
        if (n === 1) return; // never answers
        json(res, 200, []);
      },
      { timeoutMs: 200 },
    );
    expect((await client.all(endpoints.locales, {})).items).toEqual([]);
    expect(service.seen).toHaveLength(2);
  });

  it('answers timeout when every attempt times out', async () => {
    const { service, client } = await setup(() => {}, { timeoutMs: 100, maxRetries: 1 });
    const e = await failure(client.all(endpoints.locales, {}));
    expect(e.kind).toBe('timeout');
    expect(service.seen).toHaveLength(2);
  });

  it('times out a body that stalls halfway', async () => {
    const { client } = await setup(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('[');
      },
      { timeoutMs: 150, maxRetries: 0 },
    );
    expect((await failure(client.all(endpoints.locales, {}))).kind).toBe('timeout');
  });

  it('on 429 tells the limiter, waits for X-RateLimit-Reset, then retries', async () => {
    let resetAt = 0;
    const { service, client, limiter } = await setup((_req, res, n) => {
      if (n === 1) {
        resetAt = Date.now() + 300;
        return json(
          res,
          429,
          { error: 'too_many_requests', error_message: 'call quota exceeded' },
          {
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset': String(resetAt / 1000),
          },
        );
      }
      json(res, 200, []);
    });
    await client.all(endpoints.locales, {});
    expect(service.seen).toHaveLength(2);
    expect(service.seen[1]!.at).toBeGreaterThanOrEqual(resetAt - 5);
    expect(limiter.observed[0]!.feedback).toEqual({ remaining: 0, resetAtMs: resetAt, limited: true });
    expect(limiter.acquired).toHaveLength(2);
    expect(client.stats()).toMatchObject({ requests: 2, retries: 1, rateLimited: 1 });
  });

  it('treats 403 rate_limit_exceeded as a rate limit, not a scope error', async () => {
    const { service, client, limiter } = await setup((_req, res, n) =>
      n === 1
        ? json(res, 403, { error: 'rate_limit_exceeded', error_message: 'too many requests in the period' })
        : json(res, 200, []),
    );
    await client.all(endpoints.locales, {});
    expect(service.seen).toHaveLength(2);
    expect(limiter.observed[0]!.feedback.limited).toBe(true);
  });

  it('does not resend an Insert that may have reached the service, but does resend an Update', async () => {
    const failing: Handler = (_req, res) => json(res, 500, { error: 'internal_server_error', error_message: 'boom' });
    const { service, client } = await setup(failing);
    const person = {
      FirstName: 'Ann',
      LastName: 'Lee',
      Status: 'Active',
      PrimaryEmailAddress: 'ann@example.com',
      LogonId: 'alee',
    };
    expect((await failure(client.send(endpoints.individualInsert, person))).kind).toBe('server');
    expect(service.seen).toHaveLength(1);
    await failure(client.send(endpoints.individualUpdate, { ...person, ServiceId: 3 }));
    expect(service.seen).toHaveLength(1 + 6);
  });

  it('leaves no listener on the caller’s signal after its requests, however many', async () => {
    const { client } = await setup((_req, res) => json(res, 200, []));
    const ctl = new AbortController();
    for (let i = 0; i < 20; i++) await client.all(endpoints.locales, {}, { signal: ctl.signal });
    expect(getEventListeners(ctl.signal, 'abort')).toHaveLength(0);
  });

  it('warns of no leak when sixteen requests in flight share the caller’s signal, each retried once', async () => {
    const { client } = await setup(
      (_req, res, n) =>
        setTimeout(
          () => (n <= 16 ? json(res, 503, { error: 'unavailable', error_message: 'try again' }) : json(res, 200, [])),
          50,
        ),
      { backoff: { baseMs: 50, capMs: 50, random: () => 1 } },
    );
    const ctl = new AbortController();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      await Promise.all(Array.from({ length: 16 }, () => client.all(endpoints.locales, {}, { signal: ctl.signal })));
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('stops at once when the caller aborts, with the caller’s reason', async () => {
    const { client } = await setup(() => {});
    const ctl = new AbortController();
    const p = client.all(endpoints.locales, {}, { signal: ctl.signal });
    setTimeout(() => ctl.abort(new Error('shutting down')), 20);
    await expect(p).rejects.toThrow('shutting down');
  });
});

describe('writes', () => {
  const person = {
    FirstName: 'Ann',
    LastName: 'Lee',
    Status: 'Active',
    PrimaryEmailAddress: 'ann@example.com',
    LogonId: 'alee',
  };

  it('refuses an invalid body with field messages and makes no request', async () => {
    const { service, client, limiter } = await setup((_req, res) => json(res, 201, {}));
    const e = await failure(
      client.send(endpoints.individualInsert, {
        ...person,
        LogonId: 'no spaces allowed',
        SSN: '123-45-6789',
        FirstName: '',
      }),
    );
    expect(e.kind).toBe('bad_request');
    expect(Object.keys(e.fields ?? {}).sort()).toEqual(['FirstName', 'LogonId', 'SSN']);
    expect(e.message).not.toContain('123-45-6789');
    expect(service.seen).toHaveLength(0);
    expect(limiter.acquired).toHaveLength(0);
  });

  it('posts JSON and returns the created record', async () => {
    const { service, client } = await setup((req, res) =>
      json(res, 201, { ...JSON.parse(req.body), IndividualId: 77, ServiceId: 7007 }),
    );
    const created = await client.send(endpoints.individualInsert, person, { lane: 'push' });
    expect(created).toMatchObject({ IndividualId: 77, ServiceId: 7007, LogonId: 'alee' });
    const [s] = service.seen;
    expect(s!.method).toBe('POST');
    expect(s!.headers['content-type']).toBe('application/json');
    expect(s!.query.get('api-version')).toBe('2.0');
    expect(JSON.parse(s!.body)).toEqual(person);
  });

  it("takes the endpoint's lane unless told otherwise: writes the push lane, reads the incremental one", async () => {
    const { client, limiter } = await setup((req, res) =>
      json(res, 201, { ...JSON.parse(req.body), IndividualId: 77, ServiceId: 7007 }),
    );
    await client.send(endpoints.individualInsert, person);
    expect(limiter.acquired.map((a) => a.lane)).toEqual(['push']);
  });

  it('returns null for a write that answers with no body', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(201);
      res.end();
    });
    const result = await client.send(endpoints.validateSubmission, [
      { RequestId: 'r1', IndividualCertificationId: '9', IsVerified: true },
    ]);
    expect(result).toBeNull();
  });

  it('says the write was accepted when only its answer is unreadable', async () => {
    const { client } = await setup((_req, res) => json(res, 201, { IndividualId: 'x' }));
    const e = await failure(client.send(endpoints.individualInsert, person));
    expect([e.kind, e.code]).toEqual(['schema', 'accepted_unreadable']);
  });
});

describe('the API key stays secret', () => {
  it('appears in no error message, stack, cause or log line, whatever fails', async () => {
    const echo =
      (status: number): Handler =>
      (req, res) =>
        json(res, status, { error: 'x', error_message: `got key ${String(req.headers['authorization-token'])}` });
    const handlers: [Handler, Partial<SourceClientOptions>][] = [
      [echo(400), {}],
      [echo(401), {}],
      [echo(403), {}],
      [echo(404), {}],
      [echo(406), {}],
      [echo(429), { maxRetries: 1 }],
      [echo(500), { maxRetries: 1 }],
      [(req, res) => res.end(`not json ${String(req.headers['authorization-token'])}`), { maxRetries: 1 }],
      [(_req, res) => res.socket!.destroy(), { maxRetries: 1 }],
      [() => {}, { maxRetries: 1, timeoutMs: 50 }],
      [(_req, res) => json(res, 200, { Data: 1 }), {}],
    ];
    const { logger, lines } = capturingLogger();
    const seen: string[] = [];
    for (const [handler, opts] of handlers) {
      const { service, client } = await setup(handler, { ...opts, logger });
      for (const call of [
        () => client.all(endpoints.pendingCertifications, {}),
        () => client.lookup(endpoints.individualByServiceId, { serviceId: 1 }),
      ]) {
        const e = await call().then(
          () => undefined,
          (err: unknown) => err,
        );
        if (!e) continue;
        const err = e as Error & { cause?: Error };
        seen.push(
          err.message,
          String(err.stack),
          JSON.stringify(err),
          String(err.cause?.message),
          String(err.cause?.stack),
        );
      }
      await client.close();
      await service.close();
    }
    client = service = undefined;
    // Unreachable service: connection refused.
    const refused = new SourceClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: KEY,
      limiter: new RecordingLimiter(),
      maxRetries: 0,
      logger,
    });
    const e = (await refused.all(endpoints.locales, {}).catch((x: unknown) => x)) as SourceError;
    expect(e.kind).toBe('network');
    seen.push(e.message, String(e.stack), JSON.stringify(e));
    await refused.close();

    expect(seen.length).toBeGreaterThan(20);
    expect(lines.length).toBeGreaterThan(10);
    expect(seen.join('\n')).toContain('[redacted]');
    for (const text of [...seen, ...lines]) expect(text).not.toContain(KEY);
  });
});

describe('observers', () => {
  it('hears every attempt with its outcome, lane and endpoint, the limiter wait and the budget the service reports', async () => {
    const { Observers } = await import('../../src/observers.ts');
    const observers = new Observers();
    const requests: { outcome: string; attempt: number; lane: string; endpoint: string; status?: number }[] = [];
    const budgets: { remaining?: number; limit?: number }[] = [];
    let waits = 0;
    observers.add({ request: (e) => requests.push(e), budget: (e) => budgets.push(e), limiterWait: () => waits++ });
    await setup(
      (_req, res, n) =>
        n === 1
          ? json(res, 500, { error: 'internal_server_error', error_message: 'boom' })
          : json(res, 200, [], { 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '42' }),
      { observers, company: 'north' },
    );
    await client!.all(endpoints.certifications, {}, { lane: 'backfill' });
    expect(requests.map((r) => [r.outcome, r.attempt, r.status])).toEqual([
      ['server_error', 0, 500],
      ['ok', 1, 200],
    ]);
    expect(requests.every((r) => r.lane === 'backfill' && r.endpoint === 'certifications')).toBe(true);
    expect(waits).toBe(2);
    expect(budgets.at(-1)).toMatchObject({ remaining: 42, limit: 100 });
  });
});
