// One test file's real `udm-orch` processes over a small synthetic suite: the suite is made once
// before the file's tests, every process started through cli() is SIGKILLed after them, and the
// temp root is removed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { requireBuild, spawnCli, type CliProcess } from "./cli-process.js";

export interface CliFixture {
  /** The file's temp directory (set before its tests run). */
  readonly root: string;
  /** The small synthetic suite under root. */
  readonly suite: string;
  /** Starts `udm-orch args`; killed after the file's tests. */
  cli(args: string[], env?: Record<string, string>): CliProcess;
  /** Keeps a process started some other way to kill after the file's tests. */
  track(p: CliProcess): CliProcess;
}

export function cliFixture(name: string, suite: { seed: number; tracks: string[] }): CliFixture {
  let root = "";
  const started: CliProcess[] = [];
  beforeAll(async () => {
    requireBuild();
    root = mkdtempSync(join(tmpdir(), `udm-${name}-`));
    await makeSuite({ out: join(root, "suite"), scale: "small", seed: suite.seed, tracks: suite.tracks });
  }, 120_000);
  afterAll(() => {
    for (const p of started) p.kill("SIGKILL");
    if (root) rmSync(root, { recursive: true, force: true });
  });
  const track = (p: CliProcess) => (started.push(p), p);
  return {
    get root() {
      return root;
    },
    get suite() {
      return join(root, "suite");
    },
    cli: (args, env = {}) => track(spawnCli(args, env)),
    track,
  };
}

/** The exit code of `p`, which must exit within `ms` (else it is killed and the test fails with its output). */
export async function exitWithin(p: CliProcess, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const end = await Promise.race([p.exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  clearTimeout(timer);
  if (!end) {
    p.kill("SIGKILL");
    throw new Error(`still running after ${ms} ms:\n${p.output().slice(-3000)}`);
  }
  return end.code;
}
