#!/usr/bin/env node
// The udm-orch binary.
import { programWith, runProgram, type RegisterCommand } from "./program-base.js";

/**
 * Commands started many at once next to a run (an agent beside each engine, simulated engines)
 * load only their own code: the rest of the CLI costs ~0.3 CPU-s at every start, and an agent's
 * start is inside the run's makespan.
 */
const ALONE: Record<string, () => Promise<{ register: RegisterCommand }>> = {
  agent: () => import("./agent.js"),
  "sim-engine": () => import("./sim-engine.js"),
};

const argv = process.argv.slice(2);
const alone = ALONE[argv[0] ?? ""];
process.exitCode = alone
  ? await runProgram(programWith([(await alone()).register]), argv)
  : await (await import("./program.js")).runCli(argv);
// A command that failed has printed its error: it exits with its code even when something it
// started (a server, a thread, a child) was left open by a path that forgot to close it. The
// timer is unref'd: a process with nothing left open exits at once, as before.
if (process.exitCode !== 0) setTimeout(() => process.exit(), 3_000).unref();
