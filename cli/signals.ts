// The shutdown signals of a long-running command: SIGTERM (an orchestrator stopping the pod) and
// SIGINT (Ctrl-C). Handlers are installed here only, so every command removes what it installed.
export type ShutdownSignal = "SIGTERM" | "SIGINT";

/** Calls `handler` on every SIGTERM and SIGINT until the returned function uninstalls it. */
export function onShutdownSignals(handler: (signal: ShutdownSignal) => void): () => void {
  const listener = (signal: NodeJS.Signals) => handler(signal as ShutdownSignal);
  process.on("SIGTERM", listener);
  process.on("SIGINT", listener);
  return () => {
    process.off("SIGTERM", listener);
    process.off("SIGINT", listener);
  };
}
