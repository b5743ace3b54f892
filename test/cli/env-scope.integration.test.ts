// An environment variable applies only to the flags it is documented for (issue 23, item 9):
// UDM_JSON=1, meant for `status --json`, made `leaderboard` write a file named "1". Every UDM_<FLAG>
// keeps one meaning across the commands that read it; a flag whose name means something else on
// another command reads none. Real `udm-orch` processes over a small run.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Command } from "commander";
import { buildProgram } from "../../cli/program.js";
import { cliFixture } from "../support/cli-fixture.js";
import { BIN } from "../support/cli-process.js";

const fx = cliFixture("env-scope", { seed: 3, tracks: ["aiv-sa24-easy"] });

/** `udm-orch args` in `cwd` with `env` added; its exit code and output. */
function udm(args: string[], cwd: string, env: Record<string, string> = {}): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, UDM_NO_PROGRESS: "1", ...env }, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("environment variables keep one meaning", () => {
  it("every UDM_<FLAG> is read by flags of one shape (a switch, or a value of one kind)", () => {
    const shapes = new Map<string, Set<string>>();
    const walk = (c: Command, path: string) => {
      for (const o of c.options) {
        if (!o.envVar) continue;
        // A list of a kind is of that kind (run's --engine <urls> beside agent's --engine <url>).
        const shape = o.required || o.optional ? `${o.long} ${o.flags.split(/\s+/).at(-1)!.replace(/s>$/, ">")}` : `${o.long} (switch)`;
        const seen = shapes.get(o.envVar) ?? new Set<string>();
        seen.add(shape);
        shapes.set(o.envVar, seen);
      }
      for (const sub of c.commands) walk(sub, `${path} ${sub.name()}`);
    };
    walk(buildProgram(), "udm-orch");
    const mixed = [...shapes].filter(([, s]) => s.size > 1).map(([v, s]) => `${v}: ${[...s].join(" | ")}`);
    expect(mixed).toEqual([]);
  });

  it("UDM_JSON=1 leaves leaderboard alone; UDM_OUT does not redirect score; UDM_COORDINATOR does not stop status --out", async () => {
    const run = join(fx.root, "run");
    const made = udm(["run", "--suite", fx.suite, "--out", run, "--sim", "1", "--metrics", "off"], fx.root);
    expect(made.code, made.out).toBe(0);
    const cwd = mkdtempSync(join(tmpdir(), "udm-env-cwd-"));
    const board = udm(["leaderboard", run], cwd, { UDM_JSON: "1", UDM_HTML: "page.html", UDM_FORMAT: "json" });
    expect(board.code, board.out).toBe(0);
    expect(board.out).toMatch(/^\| /m); // markdown, as no --format was given
    expect(readdirSync(cwd)).toEqual([]);
    // `status --out` beside an agent's environment (UDM_COORDINATOR exported by the chart, Compose, Slurm).
    const st = udm(["status", "--out", run], cwd, { UDM_COORDINATOR: "127.0.0.1:1", UDM_JSON: "1" });
    expect(st.code, st.out).toBe(0);
    expect(JSON.parse(st.out)).toMatchObject({ state: "complete" });
    // A results directory exported for the coordinator is not where `score` writes its metrics.
    const elsewhere = join(fx.root, "elsewhere");
    const score = udm(["score", "--suite", fx.suite, "--results", run], cwd, { UDM_OUT: elsewhere });
    expect(score.code, score.out).toBe(0);
    expect(existsSync(elsewhere)).toBe(false);
  }, 180_000);
});
