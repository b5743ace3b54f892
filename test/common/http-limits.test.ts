// The connection cap of every HTTP port (common/http-limits.ts), on a real server on 127.0.0.1:0:
// idle connections make room for a new one (the oldest goes), and when every connection is serving
// a request the new one is answered 503 and closed. A failed accept does not end the process.
import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { limitHttpServer } from "../../common/http-limits.js";

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function start(maxConnections: number): Promise<number> {
  server = createServer((req, res) => {
    if (req.url === "/stream") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
      return;
    }
    res.end("ok\n");
  });
  limitHttpServer(server, { maxConnections });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return (server.address() as { port: number }).port;
}

/** A raw connection; resolves once connected, with what it reads until the server closes it. */
function open(port: number, request?: string): Promise<{ socket: Socket; text: () => string; closed: Promise<void> }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    sockets.push(socket);
    let text = "";
    socket.on("data", (b) => (text += b.toString()));
    socket.on("error", () => undefined);
    const closed = new Promise<void>((r) => socket.on("close", () => r()));
    socket.on("connect", () => {
      if (request) socket.write(request);
      resolve({ socket, text: () => text, closed });
    });
  });
}

/** Waits until the server has accepted `n` connections (a client's connect resolves before the server's accept). */
async function accepted(n: number): Promise<void> {
  for (const deadline = Date.now() + 10_000; ; ) {
    const count = await new Promise<number>((r) => server!.getConnections((_, c) => r(c)));
    if (count >= n) return;
    if (Date.now() > deadline) throw new Error(`the server accepted ${count} connections, not ${n}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
};

describe("limitHttpServer", () => {
  it("closes the oldest idle connection to make room: a request still gets through", async () => {
    const port = await start(2);
    const a = await open(port);
    await open(port);
    await accepted(2);
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(200);
    await a.closed;
  });

  it("answers 503 when every connection is serving a request", async () => {
    const port = await start(2);
    const s1 = await open(port, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    const s2 = await open(port, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    await until(() => s1.text().includes(": open") && s2.text().includes(": open"));
    const third = await open(port);
    await third.closed;
    expect(third.text()).toMatch(/^HTTP\/1\.1 503 /);
    expect(s1.socket.destroyed).toBe(false);
  });

  it("a failed accept is reported, not thrown", () => {
    const s = createServer();
    const seen: string[] = [];
    limitHttpServer(s, {}, (err) => seen.push(err.message));
    Object.defineProperty(s, "listening", { value: true });
    expect(() => s.emit("error", Object.assign(new Error("accept EMFILE"), { code: "EMFILE" }))).not.toThrow();
    expect(seen).toEqual(["accept EMFILE"]);
  });
});
