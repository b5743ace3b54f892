// Runs the `udm-orch` CLI in the test's own process (runCli) with its stdout and stderr captured:
// for tests of exit codes and messages that need no separate process.
import { runCli } from "../../cli/program.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `udm-orch args` in this process; what it wrote is returned, not shown. */
export async function runCliCaptured(args: string[]): Promise<CliResult> {
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  let stderr = "";
  let stdout = "";
  process.stdout.write = ((s: string | Uint8Array) => ((stdout += String(s)), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string | Uint8Array) => ((stderr += String(s)), true)) as typeof process.stderr.write;
  try {
    return { code: await runCli(args), stderr, stdout };
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
}
