// The udm-orch root command and the one mapping of errors to exit codes, without any command's
// code: a process that runs one command loads only that command (cli/main.ts).
import { Command, CommanderError } from "commander";
import { UdmError, EXIT } from "../common/errors.js";
import { VERSION } from "../common/version.js";
import { redactUrl } from "../common/redact-url.js";

export type RegisterCommand = (program: Command) => void;

export function programWith(commands: readonly RegisterCommand[]): Command {
  const program = new Command("udm-orch")
    .description("Distributed GPU inference orchestrator for the UDM evaluation suite")
    .version(VERSION)
    .exitOverride()
    .showHelpAfterError();
  for (const register of commands) register(program);
  return program;
}

/** Runs a program on argv (without node and script) and returns the exit code. */
export async function runProgram(program: Command, argv: readonly string[]): Promise<number> {
  process.exitCode = undefined;
  try {
    await program.parseAsync([...argv], { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (err) {
    return exitCodeOf(err);
  }
}

/** The one place where errors become exit codes: 0 ok, 1 failed check or run, 2 bad usage or input. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CommanderError) {
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") {
      return EXIT.ok;
    }
    return EXIT.badInput;
  }
  if (err instanceof UdmError) {
    process.stderr.write(`udm-orch: ${redactUrl(err.message)}\n`);
    return err.exitCode;
  }
  const sys = err as NodeJS.ErrnoException;
  if (err instanceof Error && typeof sys.code === "string" && typeof sys.syscall === "string") {
    // A filesystem or network failure during the work (disk full, directory removed): say what
    // failed on which path, not a stack trace; what was committed before it is kept.
    process.stderr.write(`udm-orch: ${sys.syscall}${sys.path ? ` ${sys.path}` : ""} failed: ${sys.code}${sys.code === "ENOSPC" ? " (disk full: results committed before it are kept; free space and rerun the same command to resume)" : ""}\n`);
    return EXIT.failed;
  }
  process.stderr.write(`udm-orch: ${redactUrl(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`);
  return EXIT.failed;
}
