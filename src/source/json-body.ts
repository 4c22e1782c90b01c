import { describeHtmlPage, htmlPageTitle, SourceError } from './errors.ts';
import type { HttpResponse } from './http.ts';
import { jsonText } from './json-text.ts';

/**
 * A 2xx body that is not JSON was cut short on the way: the request is worth another try. An HTML page is no
 * cut body but something other than the service answering.
 */
export function parseJson(endpoint: string, res: HttpResponse): unknown {
  try {
    return JSON.parse(jsonText(res.body));
  } catch {
    const title = htmlPageTitle(res.text);
    if (title !== undefined) {
      throw new SourceError('schema', `${endpoint}: HTTP ${res.status} with ${describeHtmlPage(title)}`, {
        endpoint,
        status: res.status,
        code: 'html_page',
      });
    }
    throw truncatedBody(endpoint, res.status, `${res.body.length} bytes`);
  }
}

/** A body that ended or broke before it was complete JSON: worth another try. */
export function truncatedBody(endpoint: string, status: number, detail: string): SourceError {
  return new SourceError('network', `${endpoint}: response body is not complete JSON (${detail}; truncated?)`, {
    endpoint,
    status,
    code: 'TRUNCATED_BODY',
  });
}
