// Every command of the CLI contract (docs/design.md), one file each.
import type { Command } from "commander";
import { register as suite } from "./suite.js";
import { register as score } from "./score.js";
import { register as agent } from "./agent.js";
import { register as simEngine } from "./sim-engine.js";
import { register as coordinator } from "./coordinator.js";
import { register as status } from "./status.js";
import { register as run } from "./run.js";
import { register as demo } from "./demo.js";
import { register as scorer } from "./scorer.js";
import { register as card } from "./card.js";
import { register as sweep } from "./sweep.js";
import { register as leaderboard } from "./leaderboard.js";
import { register as view } from "./view.js";
import { register as diff } from "./diff.js";

export const COMMANDS: ReadonlyArray<(program: Command) => void> = [demo, run, suite, score, coordinator, agent, status, simEngine, scorer, card, sweep, leaderboard, view, diff];
