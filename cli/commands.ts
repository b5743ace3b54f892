// Every command of the CLI contract (DESIGN.md), one file each.
import type { Command } from "commander";
import { register as suite } from "./suite.js";
import { register as score } from "./score.js";

export const COMMANDS: ReadonlyArray<(program: Command) => void> = [suite, score];
