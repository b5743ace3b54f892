// udm-orch view RUN_DIR: a page to browse a run's answers (view/view-server.ts), served until
// stopped (SIGINT/SIGTERM).
import type { Command } from "commander";
import { EXIT, UsageError } from "../common/errors.js";
import { parseMetricsListen } from "../common/metrics/index.js";
import { VIEW_DEFAULT_LISTEN, openRunDir, startViewServer, checkSuiteIdentity } from "../view/index.js";
import { localOpt } from "./options.js";
import { flagGroup, flagOptions, optionsFromFlags } from "./flag-group.js";
import { SUITE_FLAG, type ScopeOptions } from "./flags/scope-flags.js";
import { tokenFlags } from "./flags/access-flags.js";
import { onShutdownSignals } from "./signals.js";

/** Where `view` serves by default: what `diff` links to. */
export const VIEW_DEFAULT_URL = `http://${VIEW_DEFAULT_LISTEN}`;

const VIEW_SUITE_FLAGS = flagGroup<ScopeOptions>({}, [{ ...SUITE_FLAG, description: "the run's suite", defaultText: "suite_root of the run's run.json", mandatory: false }]);
const TOKEN_FLAGS = tokenFlags("bearer token the page's /api routes require (the page takes it as ?token=)");

export function register(program: Command): void {
  const command = program
    .command("view")
    .description("browse a run's answers in a self-contained page: tracks, records (filters), one record with its gold and distribution, confusion matrices")
    .argument("<run-dir>", "run directory (udm-orch run/coordinator --out)");
  for (const o of flagOptions(VIEW_SUITE_FLAGS)) command.addOption(o);
  command.addOption(localOpt("--listen <host:port>", "address of the page", VIEW_DEFAULT_LISTEN));
  for (const o of flagOptions(TOKEN_FLAGS)) command.addOption(o);
  command.action(async (dir: string, flags: { listen: string } & Record<string, unknown>) => {
    const listen = parseMetricsListen(flags.listen, "--listen");
    if (!listen) throw new UsageError(`--listen must be HOST:PORT, got ${JSON.stringify(flags.listen)}`);
    const { suiteDir } = optionsFromFlags(VIEW_SUITE_FLAGS, flags);
    const { token } = optionsFromFlags(TOKEN_FLAGS, flags);
    const run = openRunDir(dir, suiteDir);
    await checkSuiteIdentity(run);
    const server = await startViewServer({ run, listen, ...(token ? { token } : {}) });
    process.stdout.write(`view: ${server.url}/${token ? "?token=<token>" : ""} (${run.scope.length} tracks of ${dir}${run.limit !== undefined ? `, limited to ${run.limit} records per track` : ""})\n`);
    await new Promise<void>((resolve) => {
      const uninstall = onShutdownSignals(() => {
        uninstall();
        resolve();
      });
    });
    await server.close();
    process.exitCode = EXIT.ok;
  });
}
