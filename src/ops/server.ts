import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { Warehouse } from '../warehouse/connection.ts';
import { readStatus, type Status } from './status.ts';

export interface OpsServerOptions {
  warehouse: Warehouse;
  port: number;
  host?: string;
  log: Logger;
  /** Extra facts for /status (the schedule, queue counts). */
  extra?: () => Promise<Record<string, unknown>>;
}

export interface OpsServer {
  url: string;
  close(): Promise<void>;
}

/** The operator's HTTP side: health, status (JSON and a page). */
export async function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const handle = async () => {
      if (path === '/health') {
        await opts.warehouse.sql`select 1`;
        return reply(200, 'application/json', JSON.stringify({ ok: true }));
      }
      if (path === '/status') {
        const status = { ...(await readStatus(opts.warehouse)), ...(await opts.extra?.()) };
        return reply(200, 'application/json', JSON.stringify(status, null, 2));
      }
      if (path === '/') return reply(200, 'text/html; charset=utf-8', statusPage(await readStatus(opts.warehouse)));
      return reply(404, 'application/json', JSON.stringify({ error: 'not_found' }));
    };
    handle().catch((err: unknown) => {
      opts.log.error({ err, path }, 'ops request failed');
      reply(503, 'application/json', JSON.stringify({ ok: false, error: (err as Error).message }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const esc = (v: unknown) =>
  String(v ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

function statusPage(status: Status): string {
  const rows = status.streams
    .map(
      (s) =>
        `<tr class="${esc(s.lastOutcome)}"><td>${esc(s.company)}</td><td>${esc(s.stream)}</td><td>${esc(s.lastOutcome)}</td>` +
        `<td>${esc(s.lastOkAt?.toISOString())}</td><td>${s.rows}</td><td>${s.requests}</td><td>${s.rejects}</td><td>${esc(s.error)}</td></tr>`,
    )
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>workforce-sync status</title>
<meta http-equiv="refresh" content="10">
<style>body{font:14px system-ui;margin:2em}table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:left}
tr.failed td{background:#fee}</style></head><body>
<h1>workforce-sync</h1><p>${status.streams.length} streams; ${status.rejectsTotal} rejected records kept in sync_rejects.</p>
<table><thead><tr><th>company</th><th>stream</th><th>last run</th><th>last success</th><th>rows</th><th>requests</th><th>rejects</th><th>error</th></tr></thead>
<tbody>${rows}</tbody></table></body></html>`;
}
