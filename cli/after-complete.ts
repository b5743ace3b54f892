// --after-complete serve|exit: what a coordinator or scorer does once its run is complete. `serve`
// keeps its page, /api/status and final /metrics up until SIGTERM/SIGINT, so Prometheus and Grafana
// see the run end as a state (udm_run_state{state="complete"} 1) rather than a vanished target;
// `exit` ends the process at once (a batch job, a test waiting for the exit).
import { UsageError } from "../common/errors.js";
import { opt } from "./options.js";
import { onShutdownSignals } from "./signals.js";

export type AfterComplete = "serve" | "exit";

export function afterCompleteOption(what: string) {
  return opt("--after-complete <serve|exit>", `once the run is complete: serve ${what} until SIGTERM/SIGINT (serve), or exit at once (exit)`, "serve");
}

export function parseAfterComplete(value: unknown): AfterComplete {
  if (value === "serve" || value === "exit") return value;
  throw new UsageError(`--after-complete must be serve or exit, got ${JSON.stringify(value)}`);
}

/** Resolves with the first SIGTERM/SIGINT (the handler is uninstalled then). */
export function untilStopped(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const uninstall = onShutdownSignals((signal) => {
      uninstall();
      resolve(signal);
    });
  });
}
