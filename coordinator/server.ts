// The coordinator process: reads the suite, resumes from the results directory, serves the
// Coordinator gRPC service (Attach, Status) and grpc.health.v1, and commits results.
import { existsSync, readFileSync } from "node:fs";
import { timingSafeEqual } from "node:crypto";
import { resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { Bus, BusEvent } from "../common/bus/bus.js";
import { UsageError } from "../common/errors.js";
import type { ResultLine } from "../common/results/format.js";
import { createLogger, type Logger } from "../common/log.js";
import { loadPackageDefinition, type ProtoGrpcType } from "../proto/loader.js";
import type { AgentMessage__Output } from "../proto/generated/udm/v1/AgentMessage.js";
import type { CoordinatorMessage } from "../proto/generated/udm/v1/CoordinatorMessage.js";
import type { RunStatus__Output } from "../proto/generated/udm/v1/RunStatus.js";
import type { StatusRequest__Output } from "../proto/generated/udm/v1/StatusRequest.js";
import { AgentConnection } from "./agent-connection.js";
import { BusPublisher, busStatusOf } from "./bus-publisher.js";
import { HealthService } from "./health.js";
import { lockOutDir } from "./out-dir-lock.js";
import { ThroughputMeter } from "./throughput-meter.js";
import { runEnd, statusState, type CoordinatorState, type RunEnd } from "./lifecycle.js";
import { DEFAULT_PLAN_LIMITS, oversizeRecords, payloadBytes, planUnits, type PlanLimits } from "./planner.js";
import { givenUpLine, resultLine } from "./result-line.js";
import { ResultsStore, type StoredResultLine } from "./results-store.js";
import { openRunManifest, type MethodConfig, type RunManifest } from "./run-manifest.js";
import type { RunStatus } from "./run-status.js";
import { Scheduler, type SchedulerCounters } from "./scheduler.js";
import { defaultSpillPath, indexSuite, type SuiteIndex } from "./suite-index.js";
import { agentInfoFromWire, resultFromWire, unitToWire, welcomeToWire } from "./wire.js";
import { createProcessRegistry } from "../common/metrics/process-registry.js";
import { registerCoordinatorMetrics, type CoordinatorMetrics, type CoordinatorMetricsOptions } from "./observability/coordinator-metrics.js";
import { liveEventOf, type LiveEvent } from "./observability/live-event.js";

export interface TlsOptions {
  /** PEM text, or a path to it. */
  cert: string | Buffer;
  key: string | Buffer;
  /** CA that signs agents' client certificates (mutual TLS). */
  ca?: string | Buffer;
  /** Refuse agents without a client certificate signed by `ca`. */
  requireClientCert?: boolean;
}

export interface CoordinatorOptions {
  suiteDir: string;
  outDir: string;
  tracks?: readonly string[];
  families?: readonly string[];
  /** host:port to listen on. Default "127.0.0.1:0" (a free port). */
  listen?: string;
  /** Bearer token agents and status clients must send as `authorization: Bearer <token>`. */
  token?: string;
  tls?: TlsOptions;
  /** Engine method the agents run. Default systemone, no seeds, temperature 0, the engine's model. */
  method?: Partial<MethodConfig>;
  /** Lease of a unit, renewed by heartbeats and results. Default 30000. */
  leaseMs?: number;
  /** Heartbeat period asked of agents. Default 5000. */
  heartbeatMs?: number;
  /** Resume even when run.json names another suite, tracks or method. */
  force?: boolean;
  /** How long drain() waits for agents to hand in what they hold. Default 30000. */
  drainTimeoutMs?: number;
  planLimits?: Partial<PlanLimits>;
  /** Results store batching: lines per fsync batch (default 256), longest wait (default 50 ms). */
  storeBatchLines?: number;
  storeFlushMs?: number;
  /** Called once per committed (fsynced) result line. */
  onCommitted?: (line: StoredResultLine, track: string) => void;
  /** Called once per track whose every record is committed (at start for tracks already complete). */
  onTrackComplete?: (track: string, family: string) => void;
  /**
   * Where committed results, run events and the run's status are published (coordinator/bus-publisher.ts).
   * Owned by the caller: the coordinator stops publishing when it stops, the caller closes the bus.
   */
  bus?: Bus;
  /** Keep Prometheus metrics (udm_*) in a registry of the coordinator's thread; read with metricsText(). */
  metrics?: CoordinatorMetricsOptions;
  /** Called with each event the live page shows (track complete, agents, expired leases, the end). */
  onLiveEvent?: (event: LiveEvent) => void;
  logger?: Logger;
}

export interface RunOutcome {
  state: RunEnd;
  runId: string;
  recordsTotal: number;
  recordsCommitted: number;
  recordsResumed: number;
  /** Committed records whose line has errors (a question the engine failed); a rerun redoes them. */
  recordsErrored: number;
  counters: SchedulerCounters;
  elapsedSeconds: number;
  /** Why the run failed, when it did. */
  error?: string;
}

export interface CoordinatorHandle {
  /** host:port as agents should dial it, e.g. "127.0.0.1:43123". */
  address: string;
  port: number;
  /** The run's stable id (run.json), the same across resumes. */
  runId: string;
  outDir: string;
  /** Resolves once every record in scope is committed (complete), or when the coordinator stops. */
  done: Promise<RunOutcome>;
  state(): CoordinatorState;
  status(): RunStatus;
  /** Prometheus text of the coordinator's metrics ("" when options.metrics is absent). */
  metricsText(): Promise<string>;
  /** Stops handing out units, sends Drain, waits for agents (drainTimeoutMs), flushes, shuts down. */
  drain(): Promise<void>;
  /** Like drain() but waits at most 2 s for agents. */
  close(): Promise<void>;
}

const REJECTIONS_LOGGED = 20;

export const DEFAULT_METHOD: MethodConfig = { method: "systemone", seeds: [], temperature: 0, model: "" };

// grpc-js servers apply no ping-strike policy, so agents' keepalive pings are always accepted;
// these make the server ping idle agents too, so a vanished agent is noticed within ~30 s.
const SERVER_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.keepalive_time_ms": 20_000,
  "grpc.keepalive_timeout_ms": 10_000,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc.max_send_message_length": -1,
};

interface TrackProgressState {
  track: string;
  family: string;
  records: number;
  committed: number;
  complete: boolean;
}

export async function startCoordinator(options: CoordinatorOptions): Promise<CoordinatorHandle> {
  const log = options.logger ?? createLogger("coordinator");
  const leaseMs = options.leaseMs ?? 30_000;
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const method: MethodConfig = { ...DEFAULT_METHOD, ...options.method };
  const listen = options.listen ?? "127.0.0.1:0";
  const credentials = serverCredentials(options.tls);
  let state: CoordinatorState = "starting";

  const authorized = (md: grpc.Metadata): boolean => {
    if (options.token === undefined) return true;
    const got = md.get("authorization")[0];
    if (typeof got !== "string") return false;
    const a = Buffer.from(got);
    const b = Buffer.from(`Bearer ${options.token}`);
    return a.length === b.length && timingSafeEqual(a, b);
  };

  // The port opens before the suite is read (tens of seconds on the full suite), so probes see
  // the coordinator at once: health NOT_SERVING, Status "starting", agents refused with
  // UNAVAILABLE (they retry) until it runs.
  let serve: { attach: (call: grpc.ServerDuplexStream<AgentMessage__Output, CoordinatorMessage>) => void; status: () => RunStatus } | undefined;
  const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;
  const server = new grpc.Server(SERVER_CHANNEL_OPTIONS);
  server.addService(proto.udm.v1.Coordinator.service, {
    Attach: (call: grpc.ServerDuplexStream<AgentMessage__Output, CoordinatorMessage>) => {
      if (!authorized(call.metadata)) call.emit("error", { code: grpc.status.UNAUTHENTICATED, details: "missing or wrong bearer token" });
      else if (!serve) call.emit("error", { code: grpc.status.UNAVAILABLE, details: "coordinator is starting (reading the suite)" });
      else serve.attach(call);
    },
    Status: (call: grpc.ServerUnaryCall<StatusRequest__Output, RunStatus__Output>, cb: grpc.sendUnaryData<RunStatus__Output>) => {
      if (!authorized(call.metadata)) cb({ code: grpc.status.UNAUTHENTICATED, details: "missing or wrong bearer token" });
      else cb(null, serve ? serve.status() : startingStatus());
    },
  });
  const health = new HealthService("NOT_SERVING");
  health.addTo(server);
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(listen, credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
  } catch (err) {
    server.forceShutdown();
    throw new UsageError(`cannot listen on ${listen}: ${(err as Error).message}`, { cause: err });
  }
  const address = `${listen.slice(0, listen.lastIndexOf(":"))}:${port}`;
  log.info("coordinator listening; reading the suite", { address });

  let lock: ReturnType<typeof lockOutDir>;
  try {
    lock = lockOutDir(options.outDir, log);
  } catch (err) {
    server.forceShutdown();
    throw err;
  }
  let index: SuiteIndex;
  try {
    index = await indexSuite({
      suiteDir: options.suiteDir,
      tracks: options.tracks,
      families: options.families,
      spillPath: defaultSpillPath(options.outDir),
      logger: log,
    });
  } catch (err) {
    lock.release();
    server.forceShutdown();
    throw err;
  }
  let store: ResultsStore;
  let manifest: RunManifest;
  try {
    manifest = openRunManifest(
      options.outDir,
      { suiteIdentity: index.identity, suiteRoot: resolve(index.root), tracks: index.tracks.map((t) => t.track), method },
      { force: options.force, logger: log },
    );
    store = await ResultsStore.open({
      outDir: options.outDir,
      batchLines: options.storeBatchLines,
      flushMs: options.storeFlushMs,
      logger: log,
      onCommitted: (line) => committed(line),
      onError: (err) => fail(err),
    });
  } catch (err) {
    index.spill.dispose();
    lock.release();
    server.forceShutdown();
    throw err;
  }
  const runId = manifest.run_id;

  const progress = new Map<string, TrackProgressState>();
  let recordsResumed = 0;
  const toPlan = index.tracks.map((t) => {
    const pending = t.records.filter((r) => !store.isCommitted(r.runId));
    const done = t.records.length - pending.length;
    recordsResumed += done;
    progress.set(t.track, { track: t.track, family: t.family, records: t.records.length, committed: done, complete: pending.length === 0 });
    return { track: t.track, family: t.family, records: pending };
  });
  const limits: Required<PlanLimits> = { ...DEFAULT_PLAN_LIMITS, ...options.planLimits };
  // A record too large to send is committed once with an error per question naming its size,
  // never offered to an agent (which would refuse the message and reattach for it forever).
  const oversize = toPlan.flatMap((t) => [...oversizeRecords(t.records, limits)].map((record) => ({ record, track: t.track, family: t.family })));
  for (const t of toPlan) if (oversize.length > 0) t.records = t.records.filter((r) => payloadBytes(r) <= limits.maxRecordBytes);
  const units = planUnits(toPlan, limits);
  let recordsCommitted = recordsResumed;
  for (const { record, track, family } of oversize) {
    const reason = `record payload is ${payloadBytes(record)} bytes, over the limit of ${limits.maxRecordBytes} bytes a work unit may carry`;
    log.warn("record too large to send; committed with every question in errors", { run_id: record.runId, bytes: payloadBytes(record) });
    store.append(givenUpLine(record, track, family, reason));
  }
  log.info(manifest.resumes > 0 ? "resuming run" : "new run", {
    run_id: runId,
    records: index.totalRecords,
    committed: recordsResumed,
    units: units.length,
    repaired: store.repaired.length,
    retrying_errored: store.retrying,
  });

  const publisher = options.bus
    ? new BusPublisher({
        bus: options.bus,
        runId,
        outDir: options.outDir,
        tracks: index.tracks.map((t) => ({ track: t.track, family: t.family })),
        status: () => busStatusOf(status(), index.identity),
        log,
      })
    : undefined;
  const at = () => new Date().toISOString();
  const publishEvent = (e: BusEvent) => {
    publisher?.event(e);
    const live = options.onLiveEvent && liveEventOf(e);
    if (live) liveEvent(live);
  };
  const liveEvent = (e: LiveEvent) => {
    try {
      options.onLiveEvent?.(e);
    } catch (err) {
      log.error("onLiveEvent failed", { error: (err as Error).message });
    }
  };
  const agentIdOf = (key: string) => scheduler.agent(key)?.info.agentId ?? key;

  const scheduler = new Scheduler(units, {
    leaseMs,
    onUnitComplete: (unit, key) =>
      publishEvent({ type: "unit_done", at: at(), unitId: unit.unitId, track: unit.track, agentId: agentIdOf(key), results: unit.records.length }),
    onLeaseExpired: (unitId, key) =>
      publishEvent({ type: "unit_expired", at: at(), unitId, track: unitId.slice(0, unitId.lastIndexOf("/")), agentId: agentIdOf(key) }),
    lookup: (r) => index.byRunId.get(r)?.record,
    onAccept: (result, record, unit, agent) => {
      store.append(resultLine(result, record, unit.track, unit.family, agent.info.agentId));
      metrics?.recordLatency(result.latencyMs / 1000);
    },
    onGiveUp: (record, unit, last) => {
      log.warn("record given up after repeated invalid results; committed with every question in errors", {
        run_id: record.runId,
        reason: last.reason,
        detail: last.detail,
      });
      store.append(givenUpLine(record, unit.track, unit.family, `${last.reason}: ${last.detail}`));
    },
    onReject: (agent, result, rejection) => {
      // A faulty agent can send thousands: the first few per agent are warnings, the rest debug.
      const fields = { agent: agent.info.agentId, unit: result.unitId, run_id: result.runId, ...rejection };
      if (agent.rejected <= REJECTIONS_LOGGED) log.warn("result rejected", fields);
      else log.debug("result rejected", fields);
      if (agent.rejected === REJECTIONS_LOGGED) log.warn("further rejections of this agent are logged at debug level", { agent: agent.info.agentId });
    },
  });

  // ---- completion and shutdown ----
  let startedAt = Date.now();
  let fatal: Error | undefined;
  let resolveDone!: (o: RunOutcome) => void;
  const done = new Promise<RunOutcome>((r) => (resolveDone = r));
  let doneResolved = false;
  const outcome = (): RunOutcome => ({
    state: runEnd({ committed: recordsCommitted, total: index.totalRecords, fatal }),
    runId,
    recordsTotal: index.totalRecords,
    recordsCommitted,
    recordsResumed,
    recordsErrored: store.erroredCount,
    counters: { ...scheduler.counters, rejectedByReason: { ...scheduler.counters.rejectedByReason } },
    elapsedSeconds: (Date.now() - startedAt) / 1000,
    ...(fatal ? { error: fatal.message } : {}),
  });
  const settle = () => {
    if (doneResolved) return;
    doneResolved = true;
    resolveDone(outcome());
  };

  const connections = new Map<string, AgentConnection>();
  let lastCommitAt: number | undefined;
  const meter = new ThroughputMeter();
  const trackCompleted = (p: TrackProgressState) => {
    publishEvent({ type: "track_complete", at: at(), track: p.track, records: p.records });
    try {
      options.onTrackComplete?.(p.track, p.family);
    } catch (err) {
      log.error("onTrackComplete failed", { track: p.track, error: (err as Error).message });
    }
  };

  function committed(line: StoredResultLine): void {
    const p = progress.get(line.track);
    if (!p || !index.byRunId.has(line.run_id)) return;
    p.committed++;
    recordsCommitted++;
    lastCommitAt = Date.now();
    meter.add(1, lastCommitAt);
    publisher?.committed(line as ResultLine, line.track);
    try {
      options.onCommitted?.(line, line.track);
    } catch (err) {
      log.error("onCommitted failed", { error: (err as Error).message });
    }
    if (!p.complete && p.committed >= p.records) {
      p.complete = true;
      log.info("track complete", { track: p.track, records: p.records });
      trackCompleted(p);
    }
    if (recordsCommitted >= index.totalRecords) runComplete();
  }

  function runComplete(): void {
    if (doneResolved) return;
    log.info("run complete", { run_id: runId, records: index.totalRecords });
    scheduler.stopDispatch();
    for (const c of connections.values()) c.sendDrain("run complete");
    publishEvent({ type: "run_complete", at: at(), state: "complete" });
    settle();
  }

  function fail(err: Error): void {
    if (fatal) return;
    fatal = err;
    log.error("fatal: stopping the run", { error: err.message });
    void shutdown(2_000);
  }

  let shutdownPromise: Promise<void> | undefined;
  const shutdown = (graceMs: number): Promise<void> => {
    shutdownPromise ??= (async () => {
      if (state === "stopped") return;
      state = "draining";
      health.set("NOT_SERVING");
      scheduler.stopDispatch();
      for (const c of connections.values()) c.sendDrain("coordinator draining");
      await waitFor(() => connections.size === 0, graceMs);
      try {
        await store.close();
      } catch (err) {
        fatal ??= err as Error;
      }
      scheduler.stop();
      clearInterval(memoryLog);
      health.endWatches();
      for (const c of connections.values()) c.end();
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      index.spill.dispose();
      state = "stopped";
      if (publisher) {
        const end = outcome();
        if (end.state !== "complete") publishEvent({ type: "run_complete", at: at(), state: end.state, ...(end.error ? { reason: end.error } : {}) });
        await publisher.close();
      }
      lock.release();
      log.info("coordinator stopped", { ...outcome(), counters: undefined });
      settle();
    })();
    return shutdownPromise;
  };

  // ---- gRPC ----

  let agentSeq = 0;
  const attach = (call: grpc.ServerDuplexStream<AgentMessage__Output, CoordinatorMessage>) => {
    if (!authorized(call.metadata)) {
      call.emit("error", { code: grpc.status.UNAUTHENTICATED, details: "missing or wrong bearer token" });
      return;
    }
    if (state !== "running") {
      call.emit("error", { code: grpc.status.UNAVAILABLE, details: `coordinator is ${state}` });
      return;
    }
    let conn: AgentConnection | undefined;
    const gone = () => {
      if (!conn) return;
      if (connections.get(conn.key) === conn) {
        connections.delete(conn.key);
        publishEvent({ type: "agent_left", at: at(), agentId: conn.agentId, reason: state === "running" && !doneResolved ? "disconnected" : "run ended" });
      }
      scheduler.detach(conn.key);
      conn.end();
    };
    call.on("data", (msg: AgentMessage__Output) => {
      try {
        if (msg.kind === "hello" && msg.hello) {
          if (conn) return; // a repeated Hello changes nothing
          const info = agentInfoFromWire(msg.hello);
          info.agentId ||= call.getPeer();
          // The same agent connecting again (network blip): its old stream's leases are released now.
          for (const old of connections.values()) {
            if (old.agentId === info.agentId) {
              connections.delete(old.key);
              scheduler.detach(old.key);
              old.end({ code: grpc.status.ABORTED, details: "superseded by a newer connection of the same agent" });
            }
          }
          conn = new AgentConnection(`${info.agentId}#${++agentSeq}`, info.agentId, call, {
            unitMessage: (unit, records, backup) => {
              publishEvent({ type: "unit_leased", at: at(), unitId: unit.unitId, track: unit.track, agentId: info.agentId, records: records.length, ...(backup ? { backup } : {}) });
              return unitToWire(unit, records, backup, leaseMs, index.spill);
            },
            onWritable: () => scheduler.pump(),
          });
          connections.set(conn.key, conn);
          conn.send(welcomeToWire(runId, method, leaseMs, heartbeatMs));
          scheduler.attach(conn.key, info, conn, msg.hello.ready);
          publishEvent({ type: "agent_joined", at: at(), agentId: info.agentId, model: info.model, engineUrl: info.engineUrl });
          log.info("agent attached", { agent: info.agentId, model: info.model, ready: msg.hello.ready, engine: info.engineUrl });
          if (doneResolved || state !== "running") conn.sendDrain(doneResolved ? "run complete" : "coordinator draining");
          return;
        }
        if (!conn) {
          call.emit("error", { code: grpc.status.FAILED_PRECONDITION, details: "the first message must be Hello" });
          return;
        }
        switch (msg.kind) {
          case "credit":
            scheduler.grantCredit(conn.key, msg.credit?.units ?? 0);
            break;
          case "result":
            if (msg.result) scheduler.result(conn.key, resultFromWire(msg.result));
            break;
          case "unit_done":
            if (msg.unit_done) scheduler.unitDone(conn.key, msg.unit_done.unit_id);
            break;
          case "heartbeat": {
            const wasReady = scheduler.agent(conn.key)?.ready;
            if (msg.heartbeat)
              scheduler.heartbeat(conn.key, {
                ready: msg.heartbeat.ready,
                inflightRequests: msg.heartbeat.inflight_requests,
                engineWaiting: msg.heartbeat.engine_waiting,
                engineRunning: msg.heartbeat.engine_running,
              });
            if (msg.heartbeat && wasReady !== undefined && wasReady !== msg.heartbeat.ready) liveEvent({ type: "agent_ready", at: at(), agentId: conn.agentId, ready: msg.heartbeat.ready });
            break;
          }
          default:
            break;
        }
      } catch (err) {
        fail(err as Error);
      }
    });
    call.on("end", gone);
    call.on("error", gone);
    call.on("cancelled", gone);
    call.on("close", gone);
  };

  const status = (): RunStatus => {
    const elapsed = (Date.now() - startedAt) / 1000;
    return {
      run_id: runId,
      state: statusState(state, state === "stopped" ? outcome().state : undefined, recordsCommitted, index.totalRecords),
      suite_identity: index.identity,
      records_total: index.totalRecords,
      records_committed: recordsCommitted,
      records_resumed: recordsResumed,
      units_queued: scheduler.queuedUnits,
      units_inflight: scheduler.inflightUnits,
      results_rejected: scheduler.counters.rejected,
      leases_expired: scheduler.counters.leasesExpired,
      backup_units: scheduler.counters.backupUnits,
      records_per_second: meter.rate(Date.now()),
      elapsed_seconds: elapsed,
      agents: scheduler.agentList().map((a) => ({
        agent_id: a.info.agentId,
        model: a.info.model,
        ready: a.ready,
        inflight_units: scheduler.heldBy(a.key),
        credit: a.credit,
        results: a.results,
        rejected: a.rejected,
        engine_url: a.info.engineUrl,
      })),
      tracks: [...progress.values()].map((p) => ({ ...p })),
      rejected_by_reason: { ...scheduler.counters.rejectedByReason },
      results_duplicate: scheduler.counters.duplicates,
      records_given_up: scheduler.counters.givenUp,
    };
  };

  const registry = options.metrics ? createProcessRegistry("coordinator", { processWide: false }) : undefined;
  const metrics: CoordinatorMetrics | undefined = registry
    ? registerCoordinatorMetrics(
        registry,
        {
          status,
          run: () => ({ runId, suiteIdentity: index.identity, method: method.method, model: method.model }),
          startedAtSeconds: () => (state === "starting" ? undefined : startedAt / 1000),
          lastCommitAtSeconds: () => (lastCommitAt === undefined ? undefined : lastCommitAt / 1000),
          leases: () => scheduler.leaseCount,
          agents: () =>
            scheduler.agentList().map((a) => ({
              agentId: a.info.agentId,
              ready: a.ready,
              inflightUnits: scheduler.heldBy(a.key),
              inflightRequests: a.inflightRequests,
              credit: a.credit,
              engineWaiting: a.engineWaiting,
              engineRunning: a.engineRunning,
            })),
          ...(publisher
            ? { bus: () => ({ connected: options.bus!.state === "connected", publishFailures: publisher.counters.failed, behind: publisher.behind }) }
            : {}),
        },
        options.metrics,
      )
    : undefined;

  serve = { attach, status };
  state = "running";
  startedAt = Date.now();
  health.set("SERVING");
  scheduler.startLeaseClock();
  const memoryLog = setInterval(() => {
    const m = process.memoryUsage();
    const mb = (n: number) => Math.round(n / 1048576);
    log.debug("memory", { rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed), heap_total_mb: mb(m.heapTotal), external_mb: mb(m.external), committed: recordsCommitted });
  }, 2_000);
  memoryLog.unref();
  publisher?.start();
  log.info("coordinator running", { address, run_id: runId, tls: options.tls ? (options.tls.requireClientCert ? "mutual" : "server") : "off" });

  for (const p of progress.values()) if (p.complete) trackCompleted(p);
  if (recordsCommitted >= index.totalRecords) runComplete();

  return {
    address,
    port,
    runId,
    outDir: options.outDir,
    done,
    state: () => state,
    status,
    metricsText: async () => (registry ? registry.metrics() : ""),
    drain: () => shutdown(options.drainTimeoutMs ?? 30_000),
    close: () => shutdown(2_000),
  };
}

function startingStatus(): RunStatus {
  return {
    run_id: "",
    state: "starting",
    suite_identity: "",
    records_total: 0,
    records_committed: 0,
    records_resumed: 0,
    units_queued: 0,
    units_inflight: 0,
    results_rejected: 0,
    leases_expired: 0,
    backup_units: 0,
    records_per_second: 0,
    elapsed_seconds: 0,
    agents: [],
    tracks: [],
    rejected_by_reason: {},
    results_duplicate: 0,
    records_given_up: 0,
  };
}

function serverCredentials(tls: TlsOptions | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  if (tls.requireClientCert && !tls.ca) throw new UsageError("mutual TLS needs a CA (--tls-ca) to check agents' certificates");
  return grpc.ServerCredentials.createSsl(
    tls.ca ? pem(tls.ca, "CA") : null,
    [{ cert_chain: pem(tls.cert, "certificate"), private_key: pem(tls.key, "key") }],
    tls.requireClientCert ?? false,
  );
}

/** PEM text as given, or read from the file it names. */
export function pem(value: string | Buffer, what: string): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value.includes("-----BEGIN")) return Buffer.from(value);
  if (!existsSync(value)) throw new UsageError(`TLS ${what} file not found: ${value}`);
  return readFileSync(value);
}

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!cond() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}
