import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Hono } from 'hono';

/**
 * bull-board over the given queues at `basePath`. Its actions (retry, promote, clean) act on Redis: read-only
 * unless sign-in is possible, and then the server refuses them to anyone not signed in (DashboardAuth).
 */
export function queueBoard(queues: readonly Queue[], basePath: string, readOnly: boolean): Hono {
  const adapter = new HonoAdapter(serveStatic);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: readOnly, allowRetries: !readOnly })),
    // @bull-board/hono pins its own copy of @bull-board/api's types; the adapter is the same shape at runtime.
    serverAdapter: adapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'],
    options: { uiConfig: { boardTitle: 'workforce-sync queues' } },
  });
  adapter.setBasePath(basePath);
  return adapter.registerPlugin();
}
