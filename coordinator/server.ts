// The coordinator process composed: opens the gRPC port first (health NOT_SERVING, Status
// "starting"), takes the results directory, reads the suite while scanning the committed results,
// checks run.json, then serves the run. A start that fails half-way releases what it took, newest first.
import { resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { UsageError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { CleanupStack } from "./cleanup-stack.js";
import type { CoordinatorHandle } from "./coordinator-handle.js";
import { COORDINATOR_DEFAULTS, withCoordinatorDefaults, type CoordinatorOptions } from "./coordinator-options.js";
import { CoordinatorRun } from "./coordinator-run.js";
import { CoordinatorService } from "./transport/grpc-service.js";
// Units go out in the frames they are encoded in, not copied into grpc-js's own.
import "./transport/framed-send.js";
import { HealthService } from "./transport/health.js";
import { lockOutDir } from "./out-dir-lock.js";
import { ResultsStore } from "./results-store.js";
import { openRunManifest } from "./run-manifest.js";
import { SuiteFeed } from "./suite-feed.js";
import { serverCredentials } from "./transport/tls.js";

export type { CoordinatorHandle, RunOutcome } from "./coordinator-handle.js";
export type { CoordinatorOptions } from "./coordinator-options.js";
export { pem, type TlsOptions } from "./transport/tls.js";

// grpc-js servers apply no ping-strike policy, so agents' keepalive pings are always accepted;
// these make the server ping idle agents too, so a vanished agent is noticed within ~30 s.
const SERVER_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.keepalive_time_ms": 20_000,
  "grpc.keepalive_timeout_ms": 10_000,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc.max_send_message_length": -1,
};

export async function startCoordinator(given: CoordinatorOptions): Promise<CoordinatorHandle> {
  const options = withCoordinatorDefaults(given);
  const log = options.logger ?? createLogger("coordinator");
  if (given.heartbeatMs === undefined && options.heartbeatMs < COORDINATOR_DEFAULTS.heartbeatMs) {
    // A lease shorter than BEATS_PER_LEASE default heartbeats: the heartbeat was lowered to fit it.
    log.warn(`--lease-ms ${options.leaseMs}: agents heartbeat every ${options.heartbeatMs} ms (a third of the lease; --heartbeat-ms sets it)`);
  }
  const { method, listen } = options;
  const credentials = serverCredentials(options.tls);
  const cleanup = new CleanupStack();
  let run: CoordinatorRun | undefined;
  try {
    // The port opens before the suite is read (tens of seconds on the full suite), so probes see
    // the coordinator at once: health NOT_SERVING, Status "starting", agents refused UNAVAILABLE.
    const server = new grpc.Server(SERVER_CHANNEL_OPTIONS);
    cleanup.push(() => server.forceShutdown());
    const service = new CoordinatorService({ token: options.token, onFailure: (err) => run?.fail(err) });
    service.addTo(server);
    const health = new HealthService("NOT_SERVING");
    health.addTo(server);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(listen, credentials, (err, p) => (err ? reject(new UsageError(`cannot listen on ${listen}: ${err.message}`, { cause: err })) : resolve(p))),
    );
    const address = `${listen.slice(0, listen.lastIndexOf(":"))}:${port}`;
    log.info("coordinator listening; reading the suite", { address });

    const lock = lockOutDir(options.outDir, log);
    cleanup.push(() => lock.release());
    // The suite is read while the run serves (suite-feed.ts): a track's units go out once its file
    // is verified and its committed results scanned, so the store scans each file when its track
    // comes. Without a manifest there is no identity to check run.json against before the end:
    // then the whole suite is read first, as before.
    const feed = new SuiteFeed(options, log);
    cleanup.push(() => feed.dispose());
    const storeOpening = ResultsStore.open({
      outDir: options.outDir,
      batchLines: options.storeBatchLines,
      flushMs: options.storeFlushMs,
      logger: log,
      onCommitted: (line) => run?.committed(line),
      onError: (err) => run?.fail(err),
      deferScan: feed.incremental,
      ...(options.lineWriter ? { writer: options.lineWriter } : {}),
    });
    cleanup.push(async () => (await storeOpening.catch(() => undefined))?.close());
    // A store that fails to open fails the start, but only once the suite's own verdict is in: the
    // first track's (or, without a manifest, the whole suite's).
    await Promise.all([feed.firstVerified(), storeOpening.catch(() => undefined)]);
    const index = feed.index;
    const manifest = openRunManifest(
      options.outDir,
      { suiteIdentity: feed.identity, suiteRoot: resolve(index.root), tracks: feed.selectedTracks.map((t) => t.track), limit: options.limit ?? null, method },
      { force: options.force, logger: log, ...(options.runName !== undefined ? { runName: options.runName } : {}) },
    );
    const store = await storeOpening;

    const r = new CoordinatorRun({
      options,
      log,
      method,
      leaseMs: options.leaseMs,
      heartbeatMs: options.heartbeatMs,
      server,
      health,
      lock,
      index,
      manifest,
      store,
      ...(feed.incremental ? { tracksToCome: feed.selectedTracks } : {}),
    });
    run = r;
    service.serve(r);
    health.set("SERVING");
    log.info("coordinator running", { address, run_id: r.runId, tls: options.tls ? (options.tls.requireClientCert ? "mutual" : "server") : "off" });
    r.start();
    await feed.feed(r, store);
    return {
      address,
      port,
      runId: r.runId,
      outDir: options.outDir,
      done: r.done,
      state: () => r.state(),
      status: async () => r.status(),
      metricsText: () => r.metricsText(),
      drain: (restart) => r.shutdown(options.drainTimeoutMs, restart),
      close: () => r.shutdown(2_000),
    };
  } catch (err) {
    await cleanup.unwind();
    throw err;
  }
}
