import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Postgres that cuts one connection at a chosen moment of a page's transaction: when the
 * client sends a statement's text, before that reaches the server, as a Postgres restart or a network failure
 * can catch a page whose statements are on their way. Every other byte passes untouched.
 */
export interface PostgresCutter {
  /** The database URL through the proxy. */
  url: string;
  /** Cut the next connection that sends `text` (in a statement's Parse or Query message), before it is forwarded. */
  cutAt(text: string): void;
  /** Connections cut so far. */
  cuts(): number;
  close(): Promise<void>;
}

export async function startPostgresCutter(databaseUrl: string): Promise<PostgresCutter> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let armed: Buffer | undefined;
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes(armed)) {
        armed = undefined;
        cuts++;
        // The server never sees the statement; the client never gets an answer to what it sent before.
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    cutAt: (text) => void (armed = Buffer.from(text)),
    cuts: () => cuts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
