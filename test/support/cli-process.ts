// Runs the built `udm-orch` binary as a child process, for tests that kill processes for real.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BIN = join(REPO_ROOT, "dist", "cli", "main.js");

export function requireBuild(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first (npm test does)`);
}

export interface CliProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `re` in stdout+stderr; rejects when the process exits first or after timeoutMs. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of live) c.kill("SIGKILL");
});

export function spawnCli(args: readonly string[], env: Record<string, string> = {}): CliProcess {
  requireBuild();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, UDM_NO_PROGRESS: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let out = "";
  const waiters = new Set<() => void>();
  const onData = (b: Buffer) => {
    out += b.toString("utf8");
    for (const w of waiters) w();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      res({ code, signal });
      for (const w of waiters) w();
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    kill: (signal = "SIGKILL") => void child.kill(signal),
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((res, rej) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            done();
            res(m);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            rej(new Error(`process exited (${child.exitCode ?? child.signalCode}) before printing ${re}:\n${out.slice(-3000)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          rej(new Error(`timed out after ${timeoutMs} ms waiting for ${re}:\n${out.slice(-3000)}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Every result line under a results directory (`<family>/<track>.jsonl`). */
export function resultLines(outDir: string): Array<{ run_id: string; probs: Record<string, unknown>; errors?: Record<string, string>; skipped?: string[] }> {
  const lines: Array<{ run_id: string; probs: Record<string, unknown> }> = [];
  if (!existsSync(outDir)) return lines;
  for (const fam of readdirSync(outDir)) {
    const dir = join(outDir, fam);
    // A temp file (metrics.json.<pid>.tmp) may be renamed away between the listing and the stat.
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    for (const f of readdirSync(dir)) {
      if (!f.endsWith(".jsonl")) continue;
      for (const text of readFileSync(join(dir, f), "utf8").split("\n")) {
        if (!text.trim()) continue;
        try {
          lines.push(JSON.parse(text));
        } catch {
          // a line being written at this moment; callers that need exactness read after the process ended
        }
      }
    }
  }
  return lines;
}

export async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
