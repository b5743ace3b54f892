// The one place the CLI installs shutdown signal handlers: SIGTERM (Kubernetes, systemd) and SIGINT
// (Ctrl-C) stop a process the same way. The roles' objects never install handlers: each command
// decides what a signal means (drain, stop, exit) and uninstalls it when its object is done.

/** Calls `handler` on SIGTERM and SIGINT until the returned function uninstalls it. */
export function onShutdownSignals(handler: (signal: NodeJS.Signals) => void): () => void {
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
  return () => {
    process.off("SIGTERM", handler);
    process.off("SIGINT", handler);
  };
}
