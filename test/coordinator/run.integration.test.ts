// The coordinator end to end with real gRPC on 127.0.0.1:0, real files, and test agents.
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { startCoordinator, type CoordinatorHandle, type CoordinatorOptions } from "../../coordinator/server.js";
import { createLogger } from "../../common/log.js";
import { writeTinySuite, tinyTracks } from "./helpers/tiny-suite.js";
import { TestAgent } from "./helpers/test-agent.js";

const quiet = createLogger("test", "silent");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmp(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `udm-coord-${name}-`));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function start(opts: Partial<CoordinatorOptions> & { suiteDir: string; outDir: string }): Promise<CoordinatorHandle> {
  const h = await startCoordinator({ logger: quiet, ...opts });
  cleanups.push(() => h.close());
  return h;
}

function agent(address: string, options: ConstructorParameters<typeof TestAgent>[1] = {}): TestAgent {
  const a = new TestAgent(address, options);
  cleanups.push(() => a.dispose());
  return a;
}

export function resultLines(outDir: string, family: string, track: string): Array<Record<string, unknown>> {
  const p = join(outDir, family, `${track}.jsonl`);
  if (!existsSync(p)) return [];
  return readFileSync(p, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("coordinator run", () => {
  it("commits every record exactly once with two agents, sends no gold, and completes", async () => {
    const suiteDir = writeTinySuite(tmp("suite"));
    const outDir = tmp("out");
    const committed: string[] = [];
    const completeTracks: string[] = [];
    const h = await start({
      suiteDir,
      outDir,
      onCommitted: (line) => committed.push(line.run_id),
      onTrackComplete: (t) => completeTracks.push(t),
    });
    expect(h.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const a = agent(h.address, { agentId: "a", credit: 2 });
    const b = agent(h.address, { agentId: "b", credit: 1 });
    const outcome = await h.done;
    expect(outcome.state).toBe("complete");
    const tracks = tinyTracks();
    const total = tracks.reduce((n, t) => n + t.records.length, 0);
    expect(outcome.recordsCommitted).toBe(total);
    expect(new Set(committed).size).toBe(total);
    expect(committed.length).toBe(total);
    expect(completeTracks.sort()).toEqual(["tiny-guard", "tiny-rr", "tiny-sa"]);
    for (const t of tracks) {
      const lines = resultLines(outDir, t.family, t.track);
      expect(lines.map((l) => l.run_id).sort()).toEqual(t.records.map((r) => r._evaluation.run_id).sort());
      for (const l of lines) {
        expect(l).toMatchObject({ track: t.track, family: t.family, skipped: [], format: 1 });
        expect(typeof l.agent).toBe("string");
      }
    }
    // Gold never leaves the coordinator: nothing any agent received mentions expected or scoring.
    for (const msg of [...a.received, ...b.received]) {
      const text = JSON.stringify(msg);
      expect(text).not.toMatch(/"expected"|"scoring"|qrels/);
      for (const p of msg.unit?.records ?? []) {
        expect(Object.keys(JSON.parse(p.state_json) as object).length).toBeGreaterThan(0);
        expect(JSON.parse(p.questions_json)).toBeTypeOf("object");
      }
    }
    expect(a.received[0]?.kind).toBe("welcome");
    expect(a.received[0]?.welcome?.params?.method).toBe("systemone");
    // Drain follows completion.
    await a.waitFor(() => a.received.some((m) => m.kind === "drain"), 5000, "drain");
    const status = h.status();
    expect(status.state).toBe("complete");
    expect(status.records_committed).toBe(total);
    expect(status.tracks.every((t) => t.complete)).toBe(true);
    const runJson = JSON.parse(readFileSync(join(outDir, "run.json"), "utf8")) as Record<string, unknown>;
    expect(runJson.run_id).toBe(h.runId);
    expect(runJson.sessions).toBe(1);
  });

  it("refuses a wrong or missing bearer token with UNAUTHENTICATED", async () => {
    const h = await start({ suiteDir: writeTinySuite(tmp("suite")), outDir: tmp("out"), token: "s3cret" });
    const bad = agent(h.address, { token: "nope" });
    await bad.closed;
    expect(bad.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(bad.units).toHaveLength(0);
    const none = agent(h.address, {});
    await none.closed;
    expect(none.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    await expect(none.status(undefined)).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const good = agent(h.address, { token: "s3cret", credit: 3 });
    expect((await h.done).state).toBe("complete");
    expect(good.units.length).toBeGreaterThan(0);
    expect((await good.status()).state).toBe("complete");
  });
});
