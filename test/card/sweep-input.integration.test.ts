// `udm-orch sweep` on bad input exits at once with one line and exit 2: an alias bomb, a matrix
// over the limit, a listen port over 65535 (in the config or --listen); and a sweep whose run
// cannot start (a 5,000-character model name, its address taken) exits with its code within
// seconds instead of hanging on its scorer.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";

let dir: string;
let taken: Server;
let takenPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-sweep-input-"));
  await makeSuite({ out: join(dir, "suite"), scale: "small", seed: 9, tracks: ["vihsd"] });
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  takenPort = (taken.address() as { port: number }).port;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => taken.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function config(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, ["suite: suite", `out: ${name}-runs`, ...lines, ""].join("\n"));
  return path;
}

/** Runs the sweep; its exit code, stderr lines and seconds taken (killed after 30 s). */
async function sweep(args: string[]): Promise<{ code: number | null; errLines: string[]; seconds: number; output: string }> {
  const started = Date.now();
  const p = spawnCli(["sweep", ...args]);
  const timer = setTimeout(() => p.kill("SIGKILL"), 30_000);
  const { code } = await p.exited;
  clearTimeout(timer);
  const errLines = p.output().split("\n").filter((l) => l.startsWith("udm-orch:") || /^\s+at /.test(l) || /Error/.test(l));
  return { code, errLines, seconds: (Date.now() - started) / 1000, output: p.output() };
}

describe("sweep input limits", () => {
  it("alias bomb, huge matrix, port 99999: exit 2 at once with one line", async () => {
    const bomb = ["models: [m]", "a: &a [x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(", ")}]`);
    const huge = [`models: [${Array.from({ length: 1_000 }, (_, i) => `m${i}`).join(", ")}]`, "methods: [systemone, decisions, label-read]", `temperatures: [${Array.from({ length: 1_000 }, (_, i) => i / 1_000).join(", ")}]`];
    const cases: Array<[string, string[], RegExp]> = [
      ["bomb.yaml", bomb, /alias/],
      ["huge.yaml", huge, /3000000 runs, more than the 10000/],
      ["port.yaml", ["models: [m]", "listen: 0.0.0.0:99999"], /port 0\.\.65535/],
    ];
    for (const [name, lines, message] of cases) {
      const r = await sweep(["--config", config(name, lines)]);
      expect(r.code, r.output).toBe(2);
      expect(r.errLines, r.output).toHaveLength(1);
      expect(r.errLines[0]).toMatch(message);
      expect(r.seconds).toBeLessThan(10);
    }
    const flag = await sweep(["--config", config("ok.yaml", ["models: [m]"]), "--listen", "127.0.0.1:99999"]);
    expect(flag.code, flag.output).toBe(2);
    expect(flag.errLines[0]).toMatch(/--listen must be HOST:PORT/);
  });

  it("a 5,000-character model name is bad input; a long valid one on a taken address: the sweep exits with its code within seconds", async () => {
    const tooLong = await sweep(["--config", config("too-long.yaml", [`models: ["org/${"m".repeat(5_000)}"]`])]);
    expect(tooLong.code, tooLong.output.slice(-2000)).toBe(2);
    expect(tooLong.errLines).toHaveLength(1);
    expect(tooLong.output).not.toMatch(/ENAMETOOLONG/);
    expect(tooLong.seconds).toBeLessThan(10);
    // The longest name a model id may have still gives a run directory name of bounded length.
    const model = "org/" + "m".repeat(250);
    const r = await sweep(["--config", config("long.yaml", [`models: ["${model}"]`, `listen: 127.0.0.1:${takenPort}`])]);
    expect(r.code, r.output.slice(-2000)).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.output).not.toMatch(/ENAMETOOLONG/);
    expect(r.output).toMatch(/cannot listen on 127\.0\.0\.1/);
    expect(r.seconds).toBeLessThan(15);
  });
});
