// The one host of worker threads: when threads are used (decided by the calling module's URL, not
// by a build on disk), messages handed on, a reported error decoded, a crash, the heap cap and an
// exit each reported once, and no failure after terminate().
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { FormatError } from "../../../common/errors.js";
import { encodeThreadError } from "../../../common/thread-error.js";
import { ThreadHost, threadEntry, threadsUsable, type ThreadFailure } from "../../../common/threads/index.js";

const dir = mkdtempSync(join(tmpdir(), "udm-thread-host-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A thread entry (plain JavaScript) that answers each message as `body` says. */
function entry(name: string, body: string): URL {
  const path = join(dir, `${name}.mjs`);
  writeFileSync(path, `import { parentPort, workerData } from "node:worker_threads";\nparentPort.on("message", (msg) => {\n${body}\n});\n`);
  return pathToFileURL(path);
}

function host(url: URL, options: { fatal?: boolean; maxHeapMb?: number; youngGenerationMb?: number } = {}) {
  const messages: unknown[] = [];
  const failures: ThreadFailure[] = [];
  let failed!: () => void;
  const failure = new Promise<void>((r) => (failed = r));
  const h = new ThreadHost<unknown, { type: string; error?: never }>(url, {
    workerData: { greeting: "hi" },
    ...(options.maxHeapMb ? { maxHeapMb: options.maxHeapMb } : {}),
    ...(options.youngGenerationMb ? { youngGenerationMb: options.youngGenerationMb } : {}),
    ...(options.fatal ? { fatalError: (m) => (m.type === "error" ? m.error : undefined) } : {}),
    onMessage: (m) => messages.push(m),
    onFailure: (f) => {
      failures.push(f);
      failed();
    },
  });
  return { h, messages, failures, failure };
}

describe("threadEntry", () => {
  it("gives an entry next to a compiled caller and none to a caller running from sources", () => {
    expect(threadEntry("./worker-main.js", "file:///app/dist/coordinator/worker-host.js")?.href).toBe("file:///app/dist/coordinator/worker-main.js");
    expect(threadEntry("./worker-main.js", "file:///app/coordinator/worker-host.ts")).toBeUndefined();
    expect(threadsUsable(import.meta.url)).toBe(false);
  });
});

describe("ThreadHost", () => {
  it("hands on messages with workerData, and reports nothing after terminate()", async () => {
    const { h, messages, failures } = host(entry("echo", `parentPort.postMessage({ type: "echo", msg, greeting: workerData.greeting });`));
    h.post({ n: 1 });
    while (messages.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(messages).toEqual([{ type: "echo", msg: { n: 1 }, greeting: "hi" }]);
    await h.terminate();
    await new Promise((r) => setTimeout(r, 20));
    expect(failures).toEqual([]);
  });

  it("caps a thread's young generation with its heap: 6 MB unless the host names its own", async () => {
    const limits = entry("limits", `import("node:worker_threads").then((w) => parentPort.postMessage({ type: "limits", limits: w.resourceLimits }));`);
    const young = async (options: { maxHeapMb?: number; youngGenerationMb?: number }) => {
      const { h, messages } = host(limits, options);
      h.post({});
      while (messages.length === 0) await new Promise((r) => setTimeout(r, 5));
      await h.terminate();
      const { limits: l } = messages[0] as { limits: { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb: number } };
      return [l.maxOldGenerationSizeMb, l.maxYoungGenerationSizeMb];
    };
    expect(await young({ maxHeapMb: 96 })).toEqual([96, 6]);
    expect(await young({ maxHeapMb: 96, youngGenerationMb: 16 })).toEqual([96, 16]);
  });

  it("decodes the error a thread reports and reports it once (not the exit after it)", async () => {
    const error = encodeThreadError(new FormatError("t.jsonl", 3, "questions", "bad"));
    const { h, failures, failure, messages } = host(entry("reports", `parentPort.postMessage({ type: "error", error: ${JSON.stringify(error)} }); process.exit(0);`), { fatal: true });
    h.post("go");
    await failure;
    await new Promise((r) => setTimeout(r, 50));
    expect(messages).toEqual([]);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.kind).toBe("threw");
    expect((failures[0] as { error: Error }).error).toBeInstanceOf(FormatError);
  });

  it("reports a crash, and an exit", async () => {
    const crash = host(entry("crash", `throw new Error("boom");`));
    crash.h.post("go");
    await crash.failure;
    expect(crash.failures).toMatchObject([{ kind: "crashed", outOfMemory: false, error: { message: "boom" } }]);
    const exit = host(entry("exit", `process.exit(3);`));
    exit.h.post("go");
    await exit.failure;
    expect(exit.failures).toEqual([{ kind: "exited", code: 3 }]);
  });

  it("caps the heap: a thread past it is reported out of memory", async () => {
    const oom = host(entry("oom", `const keep = []; for (;;) keep.push(new Array(1e5).fill(keep.length));`), { maxHeapMb: 16 });
    oom.h.post("go");
    await oom.failure;
    expect(oom.failures).toMatchObject([{ kind: "crashed", outOfMemory: true }]);
  }, 30_000);
});
