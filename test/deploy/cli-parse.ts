// Parses a deployment's udm-orch command line with the CLI's own commander program (cli/program.ts)
// without running the command: an unknown flag, a missing mandatory one or a missing value is the
// same error here as in the container.
import type { Command } from "commander";
import { buildProgram } from "../../cli/program.js";

export interface ParsedCommand {
  /** Command path, e.g. "coordinator" or "suite make". */
  command: string;
  options: Record<string, unknown>;
}

function leaves(cmd: Command, path: string[] = []): Array<{ cmd: Command; path: string[] }> {
  if (cmd.commands.length === 0) return [{ cmd, path }];
  return cmd.commands.flatMap((c) => leaves(c, [...path, c.name()]));
}

/** The program with every command's action replaced by one that records what was parsed. */
function parsingProgram(): { program: Command; parsed: () => ParsedCommand | undefined; errors: () => string } {
  const program = buildProgram();
  let result: ParsedCommand | undefined;
  let errors = "";
  const output = { writeOut: () => undefined, writeErr: (s: string) => void (errors += s), outputError: (s: string) => void (errors += s) };
  const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
  for (const c of all(program)) c.exitOverride().configureOutput(output);
  for (const { cmd, path } of leaves(program)) {
    cmd.action(function (this: Command) {
      result = { command: path.join(" "), options: this.opts() };
    });
  }
  return { program, parsed: () => result, errors: () => errors };
}

/**
 * Parses `args` (what follows `udm-orch`) and returns the command and its options, or throws with
 * commander's message. `env` stands in for the container's environment (UDM_<FLAG> variables).
 */
export function parseUdmOrchArgs(args: readonly string[], env: Record<string, string> = {}): ParsedCommand {
  const saved: Record<string, string | undefined> = {};
  // Only the container's UDM_ variables count, not this process's.
  for (const k of Object.keys(process.env)) if (k.startsWith("UDM_")) saved[k] = process.env[k];
  for (const k of Object.keys(saved)) delete process.env[k];
  for (const [k, v] of Object.entries(env)) {
    if (!(k in saved)) saved[k] = undefined;
    process.env[k] = v;
  }
  const { program, parsed, errors } = parsingProgram();
  try {
    program.parse([...args], { from: "user" });
  } catch (err) {
    throw new Error(`udm-orch ${args.join(" ")}: ${errors().trim() || (err as Error).message}`);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const result = parsed();
  if (!result) throw new Error(`udm-orch ${args.join(" ")}: no command ran`);
  return result;
}

/** The environment variables (UDM_<FLAG>) a command's flags read. */
export function flagEnvVars(commandPath: string): Set<string> {
  let cmd: Command | undefined = buildProgram();
  for (const name of commandPath.split(" ")) cmd = cmd?.commands.find((c) => c.name() === name);
  if (!cmd) throw new Error(`no command ${commandPath}`);
  return new Set(cmd.options.map((o) => o.envVar).filter((v): v is string => typeof v === "string"));
}
