// The agent: attaches to the coordinator, answers the units it is sent through its engine method,
// and reattaches with backoff whenever the stream breaks, until drained or stopped.
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type * as grpc from "@grpc/grpc-js";
import { createLogger, type Logger } from "../common/log.js";
import { UdmError } from "../common/errors.js";
import type { EngineMethod } from "./engine-method.js";
import { canTransition, type AgentState } from "./agent-state.js";
import { AgentAuthError } from "./agent-errors.js";
import { newCounters, type AgentStats } from "./agent-stats.js";
import { AttachSession, type SessionEnd } from "./attach-session.js";
import type { EngineLoad } from "./engine-load.js";
import { channelCredentials, createCoordinatorClient, type TlsFiles } from "./transport/coordinator-channel.js";
import { EngineProbe } from "./engine-probe.js";
import { observeEngineRequests, observeEngineStalls } from "./engine-http.js";
import { EngineStallLog } from "./engine-stall-log.js";
import { RecordSlots } from "./record-slots.js";
import type { RunWelcome } from "./transport/wire.js";
import { AGENT_DEFAULTS, MIB } from "./agent-options.js";
import { DEFAULT_BACKOFF, reconnectDelayMs, type BackoffOptions } from "./reconnect-backoff.js";

/** The attach loop's options (startAgent); the agent process's own are AgentOptions (agent-options.ts). */
export interface AttachOptions {
  /** Coordinator address, "host:port". */
  coordinator: string;
  method: EngineMethod;
  /** Default: hostname-pid-random. */
  agentId?: string;
  /** Sent as `authorization: Bearer <token>`; none when absent. */
  token?: string;
  /**
   * Report an engine that is not ready within seconds, and every 30 s while it stays down
   * (engine-probe.ts downReportMs). Default true; `run` reports its engines itself (run/engine-readiness.ts).
   */
  reportEngineDown?: boolean;
  /** TLS when set (CA alone: server TLS; with cert and key: mutual TLS); insecure when absent. */
  tls?: TlsFiles;
  /**
   * Engine URL reported in Hello (for status pages); requests to it seen failing (refused, reset,
   * 5xx in a row) make the engine probe look at once (engine-probe.ts).
   */
  engineUrl?: string;
  /** Checked by every engine probe before info() (vLLM: `<engine>/health`); none when absent. */
  engineHealthUrl?: string;
  /** Units to hold at once. Default: the engine's capacity from method.info(). */
  capacity?: number;
  /** Records in flight to the engine across all held units. Default: 2 × capacity. */
  concurrency?: number;
  /** Reconnect backoff (default 250 ms doubling to 30 s, with jitter). */
  reconnect?: Partial<BackoffOptions>;
  /**
   * Largest reconnect delay in ms after the coordinator said it restarts (a reconnecting Drain: a
   * restart, or a sweep's next run), until attached again (default RESTART_RETRY_MAX_MS).
   */
  restartRetryMaxMs?: number;
  /** Heartbeat interval in ms. Default: the coordinator's Welcome.heartbeat_ms, else 5000. */
  heartbeatMs?: number;
  /** Engine probe intervals in ms while ready / while down (defaults 5000 / 1000). */
  probeMs?: { ready?: number; down?: number };
  /** An engine not ready this long is reported in the log (default AGENT_DEFAULTS.engineReadyTimeoutMs). */
  engineReadyWarnMs?: number;
  /** Engine load for heartbeats (vllm:num_requests_waiting/running); reported as 0 when absent. */
  engineLoad?: (signal: AbortSignal) => Promise<EngineLoad>;
  /**
   * Applies the run's parameters from the coordinator's Welcome to the method. Default:
   * method.applyRunParams; with neither, a run that asks for seeds is refused rather than answered
   * without them.
   */
  onRunParams?: (params: RunWelcome) => void;
  /**
   * Largest message accepted from the coordinator, in bytes (default AGENT_DEFAULTS.maxMessageMb MiB). gRPC's own 4 MiB
   * default refused a unit holding a large record, and the agent reattached forever (issue 14).
   */
  maxMessageBytes?: number;
  /** Extra gRPC channel options (merged over the keepalive defaults). */
  channelOptions?: grpc.ChannelOptions;
  logger?: Logger;
}

/** How an agent ended. */
export type AgentOutcome =
  /** Drained: by the coordinator (run complete) or by drain() (SIGTERM); work in hand was sent. */
  | { kind: "drained"; by: "coordinator" | "agent"; reason: string }
  /** stop() was called: work in hand was dropped (the coordinator requeues it). */
  | { kind: "stopped" }
  /** Cannot go on (credentials refused, bad TLS files, the run needs another method): retrying would not help. */
  | { kind: "failed"; error: UdmError };

export interface AgentHandle {
  readonly agentId: string;
  /** Resolves once the agent is stopped; never rejects. */
  readonly done: Promise<AgentOutcome>;
  /** Finish the units in hand, send them, close the stream; resolves when stopped. */
  drain(): Promise<void>;
  /** Stop now, dropping the units in hand. */
  stop(): void;
  state(): AgentState;
  stats(): AgentStats;
}

/** Default records in flight per held unit: lets a unit's records overlap once its prefix is cached. */
const RECORDS_PER_UNIT = 2;

export function defaultAgentId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/**
 * After a reconnecting Drain another coordinator is coming on the same address, however long it
 * takes (a sweep seals a run and starts the next; an engine restarts meanwhile): redial at least
 * this often instead of backing off to 30 s, or a short next run ends before the agent is back.
 */
export const RESTART_RETRY_MAX_MS = 1_000;

/** Engine probe intervals while ready / while down, and how long one probe may take. */
const PROBE_READY_MS = 5_000;
const PROBE_DOWN_MS = 1_000;
const PROBE_TIMEOUT_MS = 10_000;

export function startAgent(options: AttachOptions): AgentHandle {
  const agentId = options.agentId ?? defaultAgentId();
  const instance = randomBytes(8).toString("hex");
  const logger = (options.logger ?? createLogger("udm-orch")).child(`agent ${agentId}`);
  const backoff: BackoffOptions = { ...DEFAULT_BACKOFF, ...options.reconnect };
  const restartBackoff: BackoffOptions = { ...backoff, maxMs: Math.min(backoff.maxMs, options.restartRetryMaxMs ?? RESTART_RETRY_MAX_MS) };
  const counters = newCounters();
  const probe = new EngineProbe(
    options.method,
    {
      readyIntervalMs: options.probeMs?.ready ?? PROBE_READY_MS,
      downIntervalMs: options.probeMs?.down ?? PROBE_DOWN_MS,
      timeoutMs: PROBE_TIMEOUT_MS,
      notReadyWarnMs: options.engineReadyWarnMs ?? AGENT_DEFAULTS.engineReadyTimeoutMs,
      ...(options.engineUrl ? { engineUrl: options.engineUrl.replace(/\/+$/, "") } : {}),
      ...(options.reportEngineDown === false ? { downReportMs: Infinity } : {}),
      ...(options.engineHealthUrl ? { healthUrl: options.engineHealthUrl } : {}),
    },
    logger,
  );
  const engineBase = options.engineUrl?.replace(/\/+$/, "");
  const unobserve = engineBase
    ? observeEngineRequests((o) => {
        if (o.url === engineBase || o.url.startsWith(`${engineBase}/`)) probe.observe(o.outcome, o.admissionRefused);
      })
    : () => {};
  const stallLog = engineBase ? new EngineStallLog(engineBase, logger) : undefined;
  const unobserveStalls = engineBase
    ? observeEngineStalls((url) => {
        if (url === engineBase || url.startsWith(`${engineBase}/`)) stallLog?.stalled(url);
      })
    : () => {};

  let state: AgentState = "starting";
  let session: AttachSession | undefined;
  let slots: RecordSlots | undefined;
  let client: ReturnType<typeof createCoordinatorClient> | undefined;
  let lastError: string | undefined;
  let lastRunId: string | undefined;
  let wantDrain = false;
  let wantStop = false;
  let coordinatorDrainReason: string | undefined;
  /** The coordinator said it restarts: the session's end is a disconnect, not the agent's. */
  let coordinatorRestarts = false;
  /** Since that, not attached again: failed attaches are retried at restartBackoff. */
  let awaitingRestart = false;
  let wake: () => void = () => {};
  let resolveDone!: (o: AgentOutcome) => void;
  const done = new Promise<AgentOutcome>((resolve) => (resolveDone = resolve));

  const setState = (next: AgentState) => {
    if (state === next) return;
    if (!canTransition(state, next)) {
      logger.error("invalid agent state transition ignored", { from: state, to: next });
      return;
    }
    logger.debug("state", { from: state, to: next });
    state = next;
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });

  const closeClient = () => {
    client?.close();
    client = undefined;
  };

  async function run(): Promise<AgentOutcome> {
    const credentials = channelCredentials(options.tls);
    const newClient = () =>
      createCoordinatorClient(options.coordinator, credentials, {
        "grpc.max_receive_message_length": options.maxMessageBytes ?? AGENT_DEFAULTS.maxMessageMb * MIB,
        ...options.channelOptions,
      });
    // The first channel connects while the engine is probed: startup is inside every run's makespan.
    // (Kept in `client`, so a stop during the probe closes it.)
    client = newClient();
    client.getChannel().getConnectivityState(true);
    probe.reportWhileDown(); // a silent engine holds the first probe for its whole timeout
    await probe.probe();
    probe.start();
    let attempt = 0;
    while (!wantStop && !wantDrain) {
      setState("connecting");
      const capacity = options.capacity ?? probe.info?.capacity;
      if (capacity !== undefined && !slots) {
        const concurrency = options.concurrency ?? Math.max(1, capacity * RECORDS_PER_UNIT);
        slots = new RecordSlots(concurrency);
        logger.info("capacity", { units: capacity, recordsInFlight: concurrency });
      }
      client ??= newClient();
      counters.attaches++;
      logger.info("attaching", { coordinator: options.coordinator, ready: probe.ready });
      // Until the engine's capacity is known the session grants no credit, so one slot is enough.
      session = new AttachSession(client, {
        coordinator: options.coordinator,
        agentId,
        instance,
        token: options.token,
        engineUrl: options.engineUrl,
        method: options.method,
        probe,
        slots: slots ?? new RecordSlots(1),
        capacity: options.capacity,
        heartbeatMs: options.heartbeatMs,
        engineLoad: options.engineLoad,
        onRunParams: options.onRunParams,
        stats: counters,
        logger,
        onAttached: () => {
          attempt = 0;
          awaitingRestart = false;
          if (state === "connecting") setState("running");
        },
        onCoordinatorDrain: (reason, reconnect) => {
          if (reconnect) {
            coordinatorRestarts = true;
            return;
          }
          coordinatorDrainReason = reason || "coordinator drain";
          setState("draining");
        },
      });
      const end: SessionEnd = await session.ended;
      lastRunId = session.welcome?.runId ?? lastRunId;
      session = undefined;
      closeClient();
      const restarting = coordinatorRestarts && coordinatorDrainReason === undefined;
      coordinatorRestarts = false;
      if (restarting && end.kind === "drained" && !wantDrain && !wantStop) {
        // What was in hand is sent; the next coordinator takes the agent on the same address.
        awaitingRestart = true;
        const delay = reconnectDelayMs(attempt++, restartBackoff);
        logger.info("the coordinator restarts; reattaching", { inMs: delay });
        setState("connecting");
        await sleep(delay);
        continue;
      }
      switch (end.kind) {
        case "drained":
          return { kind: "drained", by: coordinatorDrainReason !== undefined ? "coordinator" : "agent", reason: coordinatorDrainReason ?? end.reason };
        case "unauthenticated":
        case "incompatible":
          lastError = end.error.message;
          logger.error(end.error.message);
          return { kind: "failed", error: end.error };
        case "stopped":
          return wantDrain ? { kind: "drained", by: "agent", reason: "drain requested" } : { kind: "stopped" };
        case "stale-hello":
        case "engine-lost":
          continue;
        case "disconnected": {
          counters.disconnects++;
          lastError = end.error?.message;
          if (wantStop || wantDrain) break;
          const delay = reconnectDelayMs(attempt++, awaitingRestart ? restartBackoff : backoff);
          logger.warn("coordinator stream ended; reattaching", { error: end.error?.message, inMs: delay, attempt, ...(awaitingRestart ? { restarting: true } : {}) });
          setState("connecting");
          await sleep(delay);
        }
      }
    }
    return wantDrain ? { kind: "drained", by: "agent", reason: "drain requested while not attached" } : { kind: "stopped" };
  }

  void run()
    .catch((err: unknown): AgentOutcome => {
      const error = err instanceof UdmError ? err : new UdmError(`agent failed: ${(err as Error).message}`, { cause: err });
      lastError = error.message;
      logger.error(error.message);
      return { kind: "failed", error };
    })
    .then((outcome) => {
      unobserve();
      unobserveStalls();
      probe.stop();
      session?.stop();
      closeClient();
      setState("stopped");
      logger.info("agent stopped", { outcome: outcome.kind, ...(outcome.kind === "drained" ? { by: outcome.by, reason: outcome.reason } : {}) });
      resolveDone(outcome);
    });

  return {
    agentId,
    done,
    async drain() {
      if (state !== "stopped" && !wantDrain && !wantStop) {
        wantDrain = true;
        setState("draining");
        if (session) session.drain("agent drain");
        else wake();
      }
      await done;
    },
    stop() {
      if (state === "stopped" || wantStop) return;
      wantStop = true;
      session?.stop();
      wake();
    },
    state: () => state,
    stats: (): AgentStats => ({
      ...counters,
      engineLoad: counters.engineLoad ? { ...counters.engineLoad } : undefined,
      state,
      agentId,
      ready: probe.ready,
      model: probe.info?.model,
      runId: session?.welcome?.runId ?? lastRunId,
      inflightUnits: session?.inflightUnits ?? 0,
      inflightRecords: slots?.inUse ?? 0,
      lastError,
    }),
  };
}

export { AgentAuthError };
