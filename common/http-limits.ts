// Bounds on an HTTP server that anyone who can reach its port may open connections to (the
// coordinator's page and /metrics, the scorer's and agents' /metrics, the sim engine): a cap on open
// connections, and timeouts for a client that sends its headers or request slowly or sits idle.
// Without them 1,100 idle connections took every descriptor of a process under a 1,024 limit, and
// the next file or socket the coordinator opened failed with EMFILE.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface HttpLimits {
  /**
   * Open connections at most. One past it closes the oldest connection without a request in
   * flight, or, when every one has a request in flight, is answered 503 and closed. @default 256
   */
  maxConnections: number;
  /** Time a client has to send a request's headers. @default 10_000 */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request. @default 30_000 */
  requestTimeoutMs: number;
  /** How long a connection may sit without a byte either way before it is closed; 0 = never. @default 120_000 */
  idleTimeoutMs: number;
}

export const HTTP_LIMITS_DEFAULTS: HttpLimits = {
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 120_000,
};

const BUSY = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 29\r\nConnection: close\r\nRetry-After: 1\r\n\r\ntoo many connections; retry\r\n";

/**
 * Applies the limits to `server` (before it listens) and keeps an accept that fails (EMFILE, ENFILE:
 * the process is out of descriptors) from ending the process: it is reported to `onAcceptError`
 * and the server goes on with the connections it has.
 */
export function limitHttpServer(server: Server, limits: Partial<HttpLimits> = {}, onAcceptError?: (err: Error) => void): void {
  const l = { ...HTTP_LIMITS_DEFAULTS, ...limits };
  server.headersTimeout = l.headersTimeoutMs;
  server.requestTimeout = l.requestTimeoutMs;
  // Node checks the two above at this period (30 s by default): a tenth of the headers' time.
  (server as Server & { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.max(250, Math.floor(l.headersTimeoutMs / 10));
  server.setTimeout(l.idleTimeoutMs, (socket: Socket) => socket.destroy());
  // Open connections, oldest first, each with whether a request is in flight on it.
  const open = new Map<Socket, { busy: boolean }>();
  server.on("connection", (socket: Socket) => {
    if (open.size >= l.maxConnections) {
      // Full: the oldest connection with no request in flight (one that never sent a request, or a
      // keep-alive between requests) makes room, so idle connections cannot lock clients out.
      let idle: Socket | undefined;
      for (const [s, state] of open) if (!state.busy) { idle = s; break; }
      if (idle) {
        open.delete(idle);
        idle.destroy();
      } else {
        // Every connection is serving a request (event streams): a short answer and the descriptor
        // back at once. Node's own maxConnections would close it without a word.
        socket.on("error", () => undefined);
        socket.end(BUSY);
        socket.destroySoon();
        setTimeout(() => socket.destroy(), 1_000).unref();
        return;
      }
    }
    const state = { busy: false };
    open.set(socket, state);
    socket.once("close", () => open.delete(socket));
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const state = open.get(req.socket);
    if (!state) return;
    state.busy = true;
    res.once("close", () => (state.busy = false));
  });
  // Past listen, the server's only errors are failed accepts; without a listener one would throw.
  server.on("error", (err: NodeJS.ErrnoException) => {
    if (server.listening) onAcceptError?.(err);
  });
}
