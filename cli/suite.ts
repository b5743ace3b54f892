// udm-orch suite make | verify
import type { Command } from "commander";

export function register(program: Command): void {
  program.command("suite").description("make or verify a suite");
}
