// Whether a test that needs an outside tool (prometheus, promtool, chromium, helm's zip, Slurm,
// munge) runs, skips with a message (tool missing on a developer's machine) or fails (tool missing
// under CI set to a true value, where a skipped test would hide a broken install step in .ci/run).
import { spawnSync } from "node:child_process";

/** CI set to a true value (`true`, `1`, `yes`, `on`, any case): a missing tool fails its tests instead of skipping them. */
export function underCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(true|1|yes|on)$/i.test((env.CI ?? "").trim());
}

export type ToolMode = { mode: "run" } | { mode: "skip" | "fail"; message: string };

const known = new Map<string, boolean>();

export function toolAvailable(command: string): boolean {
  let ok = known.get(command);
  if (ok === undefined) {
    ok = spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
    known.set(command, ok);
  }
  return ok;
}

/** Tools missing from PATH (`command -v`). */
export function missingTools(tools: readonly string[]): string[] {
  return tools.filter((t) => !toolAvailable(t));
}

/** `install` says how to get the missing tools, e.g. "apt-get install prometheus". */
export function toolMode(tools: readonly string[], install: string): ToolMode {
  const missing = missingTools(tools);
  if (missing.length === 0) return { mode: "run" };
  const message = `${missing.join(", ")} not found (${install})`;
  if (underCi()) return { mode: "fail", message: `${message}: CI=${process.env.CI} needs it; .ci/run installs it` };
  process.stderr.write(`${message}: test skipped\n`);
  return { mode: "skip", message };
}

/** toolMode for a Debian package, as the mode alone. */
export function toolTestMode(commands: readonly string[], pkg: string): ToolMode["mode"] {
  return toolMode(commands, `apt-get install ${pkg}`).mode;
}
