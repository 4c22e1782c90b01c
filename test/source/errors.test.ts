import { describe, expect, it } from 'vitest';
import {
  errorFromResponse,
  errorFromTransport,
  kindOfStatus,
  readErrorBody,
  SourceError,
} from '../../src/source/errors.ts';

describe('error bodies', () => {
  it('reads the { error, error_message } shape', () => {
    expect(readErrorBody('{"error":"not_found","error_message":"individual does not exist"}')).toEqual({
      code: 'not_found',
      message: 'individual does not exist',
    });
  });

  it('reads the { Message, Errors } shape into message and fields', () => {
    const body = {
      Message: 'The request is invalid.',
      Errors: { Error: 'First name cannot be empty', LogonId: ['too long', 'taken'] },
    };
    expect(readErrorBody(JSON.stringify(body))).toEqual({
      message: 'The request is invalid.',
      fields: { Error: 'First name cannot be empty', LogonId: 'too long; taken' },
    });
  });

  it('yields nothing from a body that is not a JSON object', () => {
    for (const text of ['', '<error>x</error>', '[1]', 'null', '"text"']) expect(readErrorBody(text)).toEqual({});
  });
});

describe('kinds', () => {
  it('follows the spec’s error table', () => {
    expect(kindOfStatus(400)).toBe('bad_request');
    expect(kindOfStatus(304)).toBe('bad_request');
    expect(kindOfStatus(401)).toBe('auth');
    expect(kindOfStatus(403, 'insufficient_scope')).toBe('scope');
    expect(kindOfStatus(403, 'invalid_scope')).toBe('scope');
    expect(kindOfStatus(403, 'rate_limit_exceeded')).toBe('rate_limit');
    expect(kindOfStatus(404)).toBe('not_found');
    expect(kindOfStatus(406)).toBe('not_acceptable');
    expect(kindOfStatus(429)).toBe('rate_limit');
    expect(kindOfStatus(500)).toBe('server');
    expect(kindOfStatus(503)).toBe('server');
  });

  it('retries only what may pass on another try', () => {
    const retryable = (k: ConstructorParameters<typeof SourceError>[0]) => new SourceError(k, 'x').retryable;
    expect(['rate_limit', 'server', 'network', 'timeout'].every((k) => retryable(k as never))).toBe(true);
    expect(
      ['auth', 'scope', 'bad_request', 'not_found', 'schema', 'not_acceptable'].some((k) => retryable(k as never)),
    ).toBe(false);
  });
});

describe('errorFromResponse', () => {
  it('names the endpoint, status and message, and keeps the code and fields', () => {
    const e = errorFromResponse(
      'individualInsert',
      400,
      JSON.stringify({ Message: 'Invalid', Errors: { FirstName: 'required' } }),
    );
    expect(e.message).toBe('individualInsert: HTTP 400 Invalid (FirstName: required)');
    expect([e.kind, e.status, e.code, e.endpoint]).toEqual(['bad_request', 400, 'bad_request', 'individualInsert']);
    expect(e.fields).toEqual({ FirstName: 'required' });
  });

  it('tells a rate-limit 403 from a scope 403 by its code, and keeps the wait only for rate limits', () => {
    expect(errorFromResponse('x', 403, '{"error":"rate_limit_exceeded"}', 30)).toMatchObject({
      kind: 'rate_limit',
      retryAfterSeconds: 30,
    });
    expect(errorFromResponse('x', 403, '{"error":"insufficient_scope"}', 30)).toMatchObject({
      kind: 'scope',
      retryAfterSeconds: undefined,
    });
  });

  it('falls back to a code for the status when the body says nothing', () => {
    expect(errorFromResponse('x', 304, '')).toMatchObject({ code: 'not_modified', kind: 'bad_request' });
    expect(errorFromResponse('x', 502, 'bad gateway')).toMatchObject({ code: 'internal_server_error', kind: 'server' });
    expect(errorFromResponse('x', 502, '<html>bad gateway</html>')).toMatchObject({
      code: 'html_page',
      kind: 'server',
      retryable: false,
    });
  });
});

describe('errorFromTransport', () => {
  it('sorts timeouts from other network failures and scrubs the text', () => {
    const scrub = (t: string) => t.replaceAll('s3cret', '[redacted]');
    const timeout = errorFromTransport(
      'x',
      Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
      scrub,
    );
    expect(timeout.kind).toBe('timeout');
    const reset = errorFromTransport(
      'x',
      Object.assign(new Error('socket hang up s3cret'), { code: 'ECONNRESET' }),
      scrub,
    );
    expect([reset.kind, reset.code]).toEqual(['network', 'ECONNRESET']);
    expect(reset.message).not.toContain('s3cret');
    expect((reset.cause as Error).message).toBe('socket hang up [redacted]');
  });
});

describe('HTML answers', () => {
  it('names an HTML error page as such, with its title, not as the status code', () => {
    const err = errorFromResponse(
      'locales',
      502,
      '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body></body></html>',
    );
    expect(err.kind).toBe('server');
    expect(err.code).toBe('html_page');
    expect(err.message).toMatch(
      /^locales: HTTP 502 with an HTML page \("502 Bad Gateway"\) instead of the service's JSON/,
    );
    expect(errorFromResponse('locales', 500, '{"error":"internal_server_error"}').code).toBe('internal_server_error');
  });
});
