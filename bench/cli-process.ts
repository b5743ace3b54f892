// A `udm-orch` command run as a child process of a benchmark (logs at warn, no progress bar), with
// a way to wait for a line of its output.
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The built CLI beside the built benchmarks (dist/cli/main.js). */
export const CLI_MAIN = join(dirname(fileURLToPath(import.meta.url)), "..", "cli", "main.js");

export interface CliProcess {
  child: ChildProcess;
  /** Resolves with the first match of `re` in the output so far; rejects if the process exits first. */
  line: (re: RegExp) => Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

/** keepChars: keep only the output's tail (long runs print much); every line is still matched as it arrives. */
export function startCli(args: readonly string[], options: { keepChars?: number } = {}): CliProcess {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, UDM_LOG_LEVEL: "warn", UDM_NO_PROGRESS: "1" } });
  let out = "";
  const waiters: Array<() => void> = [];
  const onData = (b: Buffer) => {
    out += b.toString();
    if (options.keepChars !== undefined) out = out.slice(-options.keepChars);
    for (const w of waiters) w();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return {
    child,
    exited,
    line: (re) =>
      new Promise((res, rej) => {
        const check = () => {
          const m = out.match(re);
          if (m) res(m);
        };
        waiters.push(check);
        check();
        void exited.then((code) => rej(new Error(`${args[0]} exited (${code}) before ${re}:\n${out.slice(-2000)}`)));
      }),
  };
}
