// Whether a deploy test that needs an outside tool (helm's zip, Slurm, munge) runs, skips with a
// message (tool missing on a developer's machine) or fails (tool missing under CI=true, where a
// skipped test would hide a broken install step in .ci/run).
import { spawnSync } from "node:child_process";

export type ToolMode = { mode: "run" } | { mode: "skip" | "fail"; message: string };

/** Tools missing from PATH (`command -v`). */
export function missingTools(tools: readonly string[]): string[] {
  return tools.filter((t) => spawnSync("sh", ["-c", `command -v ${t}`], { stdio: "ignore" }).status !== 0);
}

export function toolMode(tools: readonly string[], install: string): ToolMode {
  const missing = missingTools(tools);
  if (missing.length === 0) return { mode: "run" };
  const message = `${missing.join(", ")} not found (${install})`;
  if (process.env.CI === "true") return { mode: "fail", message: `${message}: CI=true needs it; .ci/run installs it` };
  process.stderr.write(`${message}: test skipped\n`);
  return { mode: "skip", message };
}
