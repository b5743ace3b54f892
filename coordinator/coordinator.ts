// The coordinator role as one object: create() starts it (in a heap-capped worker thread when running
// from the build, else in this thread: worker-host.ts), run() is its run, shutdown() drains it. It
// wraps startBoundedCoordinator's handle, which stays for callers that hold one.
import type { CoordinatorHandle, RunOutcome } from "./coordinator-handle.js";
import type { CoordinatorState } from "./lifecycle.js";
import type { RunStatus } from "../common/run-status/index.js";
import { startBoundedCoordinator, type BoundedCoordinatorOptions } from "./worker-host.js";

export class Coordinator {
  /**
   * Opens the port, takes the out dir and reads the suite; resolves once the run is served.
   * The heap cap of the worker thread is options.maxHeapMb (COORDINATOR_DEFAULTS).
   */
  static async create(options: BoundedCoordinatorOptions): Promise<Coordinator> {
    return new Coordinator(await startBoundedCoordinator(options));
  }

  /** Wraps a coordinator already started (startBoundedCoordinator or server.ts startCoordinator). */
  constructor(readonly handle: CoordinatorHandle) {}

  /** host:port as agents should dial it, e.g. "127.0.0.1:43123". */
  get address(): string {
    return this.handle.address;
  }

  get port(): number {
    return this.handle.port;
  }

  /** The run's stable id (run.json), the same across resumes. */
  get runId(): string {
    return this.handle.runId;
  }

  get outDir(): string {
    return this.handle.outDir;
  }

  /**
   * Resolves once every record in scope is committed, or when the coordinator stops (CoordinatorHandle.done).
   * A complete run's coordinator goes on serving until shutdown() or close().
   */
  run(): Promise<RunOutcome> {
    return this.handle.done;
  }

  state(): CoordinatorState {
    return this.handle.state();
  }

  /** The run's status; once stopped, its final status. */
  status(): Promise<RunStatus> {
    return this.handle.status();
  }

  /** Prometheus text of the coordinator's metrics ("" without options.metrics). */
  metricsText(): Promise<string> {
    return this.handle.metricsText();
  }

  /**
   * Drains: stops handing out units, tells agents to drain, waits for them (drainTimeoutMs), flushes,
   * stops. With `restart` (a coordinator stopped to be started again) agents of a run that is not
   * complete are told to reattach, not to stop; shutdown() again without it tells them to stop.
   */
  shutdown(restart = false): Promise<void> {
    return this.handle.drain(restart);
  }

  /** Like shutdown() but waits at most 2 s for agents. */
  close(): Promise<void> {
    return this.handle.close();
  }
}
