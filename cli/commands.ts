// Every command of the CLI contract (DESIGN.md), one file each.
import type { Command } from "commander";
import { register as suite } from "./suite.js";
import { register as score } from "./score.js";
import { register as agent } from "./agent.js";
import { register as simEngine } from "./sim-engine.js";

export const COMMANDS: ReadonlyArray<(program: Command) => void> = [suite, score, agent, simEngine];
