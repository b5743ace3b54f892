// Whether a Debian tool a test needs (prometheus, promtool, chromium) is installed, and what the
// test file should do without it: skip with a message, or fail under CI=true, where a skipped
// suite would hide a broken install step in .ci/run.
import { spawnSync } from "node:child_process";

const known = new Map<string, boolean>();

export function toolAvailable(command: string): boolean {
  let ok = known.get(command);
  if (ok === undefined) {
    const r = spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    ok = r.status === 0;
    known.set(command, ok);
  }
  return ok;
}

export function toolTestMode(commands: readonly string[], pkg: string): "run" | "skip" | "fail" {
  const missing = commands.filter((c) => !toolAvailable(c));
  if (missing.length === 0) return "run";
  if (process.env.CI === "true") return "fail";
  process.stderr.write(`${missing.join(", ")} not found: tests skipped; install with \`apt-get install ${pkg}\`\n`);
  return "skip";
}
