// udm-orch score
import type { Command } from "commander";

export function register(program: Command): void {
  program.command("score").description("score result files against a suite");
}
