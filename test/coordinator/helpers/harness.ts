// Shared setup of the coordinator integration tests: temp dirs, started coordinators and agents,
// all cleaned up after each test.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { startCoordinator, type CoordinatorHandle, type CoordinatorOptions } from "../../../coordinator/server.js";
import { createLogger } from "../../../common/log.js";
import { TestAgent, type TestAgentOptions } from "./test-agent.js";

export const quiet = createLogger("test", "silent");

export function useHarness() {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    tmp(name: string): string {
      const d = mkdtempSync(join(tmpdir(), `udm-coord-${name}-`));
      cleanups.push(() => rmSync(d, { recursive: true, force: true }));
      return d;
    },
    async start(opts: Partial<CoordinatorOptions> & { suiteDir: string; outDir: string }): Promise<CoordinatorHandle> {
      const h = await startCoordinator({ logger: quiet, ...opts });
      cleanups.push(() => h.close());
      return h;
    },
    agent(address: string, options: TestAgentOptions = {}): TestAgent {
      const a = new TestAgent(address, options);
      cleanups.push(() => a.dispose());
      return a;
    },
  };
}

export function resultLines(outDir: string, family: string, track: string): Array<Record<string, unknown>> {
  const p = join(outDir, family, `${track}.jsonl`);
  if (!existsSync(p)) return [];
  return readFileSync(p, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
