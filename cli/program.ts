// Builds the udm-orch command tree (every command) and runs it; errors map to exit codes in
// program-base.ts.
import type { Command } from "commander";
import { COMMANDS } from "./commands.js";
import { exitCodeOf, programWith, runProgram } from "./program-base.js";

export { exitCodeOf };

export function buildProgram(): Command {
  return programWith(COMMANDS);
}

/** Runs the CLI on argv (without node and script) and returns the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  return runProgram(buildProgram(), argv);
}
