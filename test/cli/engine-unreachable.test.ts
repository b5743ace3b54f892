// An engine that is not there, or there and silent, is named within 10 s by `agent` and `run`
// (a real closed port; a server that accepts connections and never answers), and a method
// endpoint that hangs is named within seconds of its stall mark while its request keeps waiting.
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { spawnCli, type CliProcess } from "../support/cli-process.js";
import { tempDirs } from "../support/temp-dirs.js";
import { freePort } from "../../bench/bench-args.js";

const tempDir = tempDirs("udm-engine-unreachable-");
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let suite: string;
beforeAll(async () => {
  suite = tempDir();
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: ["aiv-sa24-easy"] });
});


/** A server that accepts connections and never answers. */
async function silentServer(): Promise<string> {
  const sockets = new Set<Socket>();
  const s: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.resume();
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        s.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/**
 * Waits for `re` and says how long after the process's first output line it came: the 10 s are
 * the process's own (a loaded machine takes seconds just to start node and load the CLI).
 */
async function secondsToLine(p: CliProcess, re: RegExp, started: Promise<number>): Promise<number> {
  await p.waitFor(re, 90_000);
  return (performance.now() - (await started)) / 1000;
}

/** When the process printed its first line. */
function firstLine(p: CliProcess): Promise<number> {
  return p.waitFor(/\S/, 90_000).then(() => performance.now());
}

function cli(args: string[]): CliProcess {
  const p = spawnCli(args);
  cleanups.push(async () => {
    p.kill("SIGKILL");
    await p.exited;
  });
  return p;
}

describe("an unreachable engine is named within 10 s", () => {
  it("agent, closed port: the URL and the refused connection", async () => {
    // A free port is a closed one: bound, then closed, nothing listens there.
    const engine = `http://127.0.0.1:${await freePort()}`;
    const p = cli(["agent", "--coordinator", `127.0.0.1:${await freePort()}`, "--engine", engine]);
    const started = firstLine(p);
    expect(await secondsToLine(p, new RegExp(`engine ${engine} unreachable \\(still trying\\): .*ECONNREFUSED`), started)).toBeLessThan(10);
  }, 120_000);

  it("agent, a server that never answers: the URL and the endpoint it waits on", async () => {
    const engine = await silentServer();
    const p = cli(["agent", "--coordinator", `127.0.0.1:${await freePort()}`, "--engine", engine]);
    const started = firstLine(p);
    expect(await secondsToLine(p, new RegExp(`engine ${engine} unreachable \\(still trying\\): no answer to /health for \\d+ s`), started)).toBeLessThan(10);
  }, 120_000);

  it("run, closed port and silent server, the readiness timeout a minute: each named, the run still waiting", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const silent = await silentServer();
    const p = cli(["run", "--suite", suite, "--out", tempDir(), "--engine", `${closed},${silent}`, "--engine-ready-timeout-ms", "60000"]);
    const started = firstLine(p);
    expect(await secondsToLine(p, new RegExp(`engine ${closed} unreachable or not ready \\(still waiting, up to 60000 ms in all\\): .*ECONNREFUSED`), started)).toBeLessThan(10);
    expect(await secondsToLine(p, new RegExp(`engine ${silent} unreachable or not ready \\(still waiting, up to 60000 ms in all\\): no answer to its model info for \\d+ s`), started)).toBeLessThan(10);
    expect(p.child.exitCode).toBeNull();
  }, 120_000);
});

describe("a method endpoint that does not answer", () => {
  let sim: SimEngine;
  let proxy: HttpServer;
  let proxyUrl: string;
  beforeAll(async () => {
    sim = await startSimEngine({ seed: 3 });
    // The sim engine, but /v1/systemone never answers (health and model list do).
    proxy = createHttpServer(async (req, res) => {
      if (req.url?.startsWith("/v1/systemone")) return;
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const upstream = await fetch(`${sim.url}${req.url}`, { method: req.method, headers: { "content-type": "application/json" }, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    proxy.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
    await sim.close();
  });

  it("run: 'engine not answering /v1/systemone (still waiting)' within seconds, the request still waiting on its 60 s timeout", async () => {
    // The line comes 10 s (the stall mark) after the first request; the wait allows for a loaded
    // machine (the process start and the engine's readiness took 5-10 s there). What tells the
    // stall log from the request's own timeout is that the request is still waiting then.
    const p = cli(["run", "--suite", suite, "--out", tempDir(), "--engine", proxyUrl, "--request-timeout-ms", "60000"]);
    await p.waitFor(/engine not answering \/v1\/systemone \(still waiting\)/, 45_000);
    expect(p.output()).not.toMatch(/no answer within 60000 ms/);
    expect(p.child.exitCode).toBeNull();
  }, 60_000);
});
