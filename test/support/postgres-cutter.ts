import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Postgres that cuts one connection at a chosen moment of the protocol: right after
 * the client ended a COPY (CopyDone sent, its CommandComplete not yet back), the moment a Postgres restart can
 * catch a page written through COPY staging. Every other byte passes untouched.
 */
export interface PostgresCutter {
  /** The database URL through the proxy. */
  url: string;
  /** Cut the next connection that ends a COPY. */
  cutAfterCopyEnd(): void;
  /** Connections cut so far. */
  cuts(): number;
  close(): Promise<void>;
}

/** A frontend CopyDone message: 'c' and its length, 4. */
const COPY_DONE = Buffer.from([0x63, 0, 0, 0, 4]);
const COPY_STATEMENT = Buffer.from('copy ');

export async function startPostgresCutter(databaseUrl: string): Promise<PostgresCutter> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let armed = false;
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
    let copying = false;
    client.on('data', (chunk: Buffer) => {
      copying ||= chunk.includes(COPY_STATEMENT);
      upstream.write(chunk);
      if (armed && copying && chunk.includes(COPY_DONE)) {
        armed = false;
        cuts++;
        // The server may run the COPY; its answer never reaches the client.
        client.destroy();
        upstream.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    cutAfterCopyEnd: () => void (armed = true),
    cuts: () => cuts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
