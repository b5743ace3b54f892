// `run`, `demo` and `card reproduce`: the one-process run (run/embedded-run.ts) from start to end,
// SIGTERM/SIGINT draining it (committed results are kept; rerunning the same command resumes).
import { EmbeddedRun, type EmbeddedRunOptions, type EmbeddedRunResult } from "../run/index.js";
import { onShutdownSignals } from "./signals.js";

export async function runEmbedded(options: Omit<EmbeddedRunOptions, "signal">): Promise<EmbeddedRunResult> {
  // A signal while the run starts drains it as soon as its coordinator is up.
  const shutdown = new AbortController();
  const uninstall = onShutdownSignals((signal) => shutdown.abort(signal));
  try {
    const run = await EmbeddedRun.create({ ...options, signal: shutdown.signal });
    return await run.run();
  } finally {
    uninstall();
  }
}
