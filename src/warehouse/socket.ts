import { connect as netConnect, type Socket } from 'node:net';

/**
 * postgres.js leaves Nagle's algorithm on for its sockets. A message that ends with a small write (a COPY's
 * last data and CopyDone, the statements of a pipelined transaction) then waits for the server's delayed ACK,
 * about 40 ms on Linux, which held COPY inside a transaction to a few thousand rows a second. libpq turns
 * Nagle off; so do we, by handing postgres.js sockets we connect ourselves with TCP_NODELAY set.
 *
 * With a `socket` function postgres.js skips its own connect and starts talking at once: the startup message,
 * or the SSL request and then TLS over our socket (TLS keeps the no-delay of the TCP socket beneath it).
 */

/** The parsed options postgres.js passes to its `socket` function (the parts we read). */
export interface SocketTarget {
  host: readonly string[];
  port: readonly number[];
  /** A Unix socket instead of TCP. */
  path?: string | false;
  /** Seconds; 0 or null waits as long as the operating system does. */
  connect_timeout?: number | null;
}

export type SocketFactory = (target: SocketTarget) => Promise<Socket>;

/**
 * postgres.js's `socket` option: each call connects a new socket with no-delay set. Several hosts are tried in
 * turn, one per call, as postgres.js does for the sockets it connects (a failed or refused connection retries).
 */
export function noDelaySockets(): SocketFactory {
  let next = 0;
  return (target) => {
    if (target.path) return connectSocket({ path: target.path }, target.path, target.connect_timeout);
    const i = next++ % target.host.length;
    const host = target.host[i]!;
    const port = target.port[i] ?? target.port[0]!;
    return connectSocket({ host, port }, `${host}:${port}`, target.connect_timeout).then((socket) =>
      // postgres.js names the TLS server by `socket.host` (SNI, verify-full) and reports errors by host and port.
      Object.assign(socket, { host, port }),
    );
  };
}

function connectSocket(where: { host: string; port: number } | { path: string }, name: string, timeoutSeconds?: number | null): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(where);
    const fail = (e: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(e);
    };
    // postgres.js's own connect timeout starts only once it has the socket, so the wait for it is ours.
    const timer = timeoutSeconds ? setTimeout(() => fail(connectTimeout(name)), timeoutSeconds * 1000) : undefined;
    socket.once('error', fail);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', fail);
      // A Unix socket has no Nagle to turn off.
      if ('host' in where) socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

/** The error postgres.js itself raises when a connection is not made in time. */
function connectTimeout(name: string): Error {
  return Object.assign(new Error(`write CONNECT_TIMEOUT ${name}`), { code: 'CONNECT_TIMEOUT', errno: 'CONNECT_TIMEOUT' });
}
