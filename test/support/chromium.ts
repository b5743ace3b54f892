// A real headless Chromium (Debian's `chromium`) driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: fds 3 and 4, NUL-separated JSON), so no debugging port is opened.
// Every request the page makes is recorded, to check that none leaves 127.0.0.1.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";

export interface Browser {
  /** Opens `url` in a new page and waits for its load event. */
  open(url: string): Promise<Page>;
  close(): Promise<void>;
}

export interface Page {
  /** Evaluates a JavaScript expression in the page and returns its JSON value. */
  evaluate<T>(expression: string): Promise<T>;
  /** Waits until the expression is truthy (polled), or throws after timeoutMs. */
  waitFor(expression: string, timeoutMs?: number): Promise<void>;
  screenshot(): Promise<Buffer>;
  /** Every URL the page requested so far (documents, fetches, event streams, images). */
  requests(): string[];
}

export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "udm-chromium-"));
  const child: ChildProcess = spawn(
    "chromium",
    [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-extensions",
      "--window-size=1400,1000",
      `--user-data-dir=${profile}`,
      "--remote-debugging-pipe",
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  let seq = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Set<(msg: { method: string; params: Record<string, unknown>; sessionId?: string }) => void>();
  let buf = "";
  fromBrowser.on("data", (b: Buffer) => {
    buf += b.toString("utf8");
    let i: number;
    while ((i = buf.indexOf("\0")) >= 0) {
      const msg = JSON.parse(buf.slice(0, i)) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: Record<string, unknown>; sessionId?: string };
      buf = buf.slice(i + 1);
      if (msg.id !== undefined) {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`CDP: ${msg.error.message}`));
        else p?.resolve(msg.result);
      } else if (msg.method) for (const l of listeners) l({ method: msg.method, params: msg.params ?? {}, ...(msg.sessionId ? { sessionId: msg.sessionId } : {}) });
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => {
    for (const p of pending.values()) p.reject(new Error(`chromium exited: ${stderr}`));
    pending.clear();
  });
  const send = <T>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + "\0");
    });
  await send("Browser.getVersion");

  return {
    async open(url) {
      const { targetId } = await send<{ targetId: string }>("Target.createTarget", { url: "about:blank" });
      const { sessionId } = await send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true });
      const requests: string[] = [];
      let loaded: () => void = () => {};
      const load = new Promise<void>((r) => (loaded = r));
      listeners.add((m) => {
        if (m.sessionId !== sessionId) return;
        if (m.method === "Network.requestWillBeSent") requests.push((m.params.request as { url: string }).url);
        if (m.method === "Page.loadEventFired") loaded();
      });
      await send("Network.enable", {}, sessionId);
      await send("Page.enable", {}, sessionId);
      await send("Page.navigate", { url }, sessionId);
      await load;
      const evaluate = async <T>(expression: string): Promise<T> => {
        const r = await send<{ result: { value: T }; exceptionDetails?: { text: string } }>("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }, sessionId);
        if (r.exceptionDetails) throw new Error(`page: ${r.exceptionDetails.text}`);
        return r.result.value;
      };
      return {
        evaluate,
        async waitFor(expression, timeoutMs = 15_000) {
          const until = Date.now() + timeoutMs;
          while (!(await evaluate<boolean>(`Boolean(${expression})`))) {
            if (Date.now() > until) throw new Error(`timed out waiting for ${expression}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        },
        async screenshot() {
          const r = await send<{ data: string }>("Page.captureScreenshot", { format: "png", captureBeyondViewport: true }, sessionId);
          return Buffer.from(r.data, "base64");
        },
        requests: () => [...requests],
      };
    },
    async close() {
      try {
        await Promise.race([send("Browser.close"), new Promise((r) => setTimeout(r, 3_000))]);
      } catch {
        // already gone
      }
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
      // Chromium's helper processes may still be writing the profile for a moment.
      try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
      } catch {
        // left in the temp dir
      }
    },
  };
}
