/** Starts the API on a port: `startApi({ port, ...deps })` -> `{ url, close() }`. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { AppError } from '../../contracts/errors.ts';
import { createApp } from './app.ts';
import type { ApiDeps } from './types.ts';

export interface StartApiOptions extends ApiDeps {
  /** TCP port; 0 picks a free one. Default 0. */
  port?: number;
  /** Interface to bind. Default `127.0.0.1`; use `0.0.0.0` to serve other machines. */
  host?: string;
}

export interface RunningApi {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const { port = 0, host = '127.0.0.1', ...deps } = options;
  return listen(createApp(deps), port, host);
}

/**
 * How long a connection has to send a whole request, in ms: its headers, since the API takes no
 * bodies. Node's defaults (60 s for the headers, looked at every 30 s) let a client that opens
 * connections and sends nothing, or a header a byte at a time, hold each one for up to 90 s: at
 * a limit of 20,000 open files, about 220 new connections a second would keep a process there.
 * Here such a connection gets a 408 and is closed within a second of this bound (it would take
 * about eight times that rate). Every client sends a GET's headers at once; 10 s leaves a slow
 * network room.
 */
export const REQUEST_TIMEOUT_MS = 10_000;

/** Serves `app` on `host:port` (0 picks a free port) until `close()`. */
export async function listen(app: Koa, port: number, host: string): Promise<RunningApi> {
  const server = await new Promise<Server>((resolve, reject) => {
    // Passed at creation: the check of these bounds is set up with the values it is created with.
    const s = createServer({ headersTimeout: REQUEST_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000 }, app.callback());
    s.listen(port, host, () => resolve(s));
    s.once('error', (err) => reject(listenError(err, port, host)));
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(host)}:${bound}`,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Idle keep-alive sockets would hold close() open.
        server.closeAllConnections();
      }),
  };
}

/**
 * A port that cannot be taken, said to the person starting the process (main.ts prints an
 * AppError's message, not a stack): which port, why, and the setting that changes it.
 */
function listenError(err: NodeJS.ErrnoException, port: number, host: string): Error {
  const where = `${host}:${port}`;
  if (err.code === 'EADDRINUSE') return new AppError('unavailable', `${where} is already in use (another Marquee, or another server?): stop it, or choose another port (PORT for the API, OPS_PORT for the ops server)`, { cause: err });
  if (err.code === 'EACCES') return new AppError('forbidden', `not allowed to listen on ${where} (ports below 1024 need privileges): choose another port (PORT, OPS_PORT)`, { cause: err });
  if (err.code === 'EADDRNOTAVAIL') return new AppError('unavailable', `${host} is not an address of this machine: set HOST to one of its interfaces, or 0.0.0.0 for all`, { cause: err });
  // A HOST that names no address (a typo, or a name this machine cannot resolve).
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return new AppError('unavailable', `HOST ${host} does not resolve to an address (${err.code}): set it to an address of this machine, or 0.0.0.0 for all`, { cause: err });
  return err;
}

/**
 * The host of a URL a person can open for a listening address: the loopback one for "every
 * address" (0.0.0.0, ::), an IPv6 address in brackets (`http://::1:8080` is no URL).
 */
export function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
