// A coordinator's run once the suite is read and results are resumed: the scheduler, the agents'
// sessions, progress and totals, publishing to the bus and the live page, the status, its
// metrics, and the ordered shutdown.
import type * as grpc from "@grpc/grpc-js";
import { busStatusOf, type BusEvent } from "../common/bus/index.js";
import { FormatError, UsageError } from "../common/errors.js";
import type { Logger } from "../common/log.js";
import { AgentSessions } from "./agent-sessions.js";
import { BusPublisher } from "./bus-publisher.js";
import type { RunOutcome } from "./coordinator-handle.js";
import type { AttachStream, AgentSessionInput, ServedRun } from "./transport/grpc-service.js";
import type { HealthService } from "./transport/health.js";
import { runEnd, statusState, type CoordinatorState } from "./lifecycle.js";
import type { OutDirLock } from "./out-dir-lock.js";
import { oversizeRecords, payloadBytes, planUnits } from "./planner.js";
import type { RecordEntry, TrackIndex } from "./suite-index.js";
import { givenUpLine } from "./result-line.js";
import { compactAnswerOf } from "./incoming-result.js";
import { RecordQuestions } from "./record-questions.js";
import { noticeLine, type CommitNotice, type ResultsStore } from "./results-store.js";
import type { MethodConfig, RunManifest } from "./run-manifest.js";
import { RunProgress } from "./run-progress.js";
import { RunAgentsRecord } from "./run-agents.js";
import type { RunStatus } from "../common/run-status/index.js";
import { Scheduler } from "./scheduler.js";
import type { ResolvedCoordinatorOptions } from "./coordinator-options.js";
import type { SuiteIndex } from "./suite-index.js";
import type { Registry } from "prom-client";
import { createProcessRegistry } from "../common/metrics/index.js";
import { registerCoordinatorMetrics, type CoordinatorMetrics } from "./observability/coordinator-metrics.js";
import { liveEventOf, type LiveEvent } from "./observability/live-event.js";
import { followScores, type ScoreFollower } from "./observability/follow-scores.js";
import { RunClock } from "./run-clock.js";
import { EventHistory } from "./event-history.js";
import { DEFAULT_REPLAY } from "./observability/event-hub.js";

const REJECTIONS_LOGGED = 20;

export interface RunParts {
  options: ResolvedCoordinatorOptions;
  log: Logger;
  method: MethodConfig;
  leaseMs: number;
  heartbeatMs: number;
  server: grpc.Server;
  health: HealthService;
  lock: OutDirLock;
  index: SuiteIndex;
  manifest: RunManifest;
  store: ResultsStore;
  /**
   * The suite is still being read: its tracks (in scope, in suite order) come by addTrack as they
   * are verified, then allTracksAdded(); the index holds those read so far.
   */
  tracksToCome?: ReadonlyArray<{ track: string; family: string; records: number }>;
}

export class CoordinatorRun implements ServedRun {
  readonly runId: string;
  readonly done: Promise<RunOutcome>;
  private lifecycle: CoordinatorState = "running";
  private readonly progress: RunProgress;
  private readonly scheduler: Scheduler;
  private readonly sessions: AgentSessions;
  private readonly publisher: BusPublisher | undefined;
  /** run.json's agents block. */
  private readonly runAgents: RunAgentsRecord;
  private readonly registry: Registry | undefined;
  private readonly metrics: CoordinatorMetrics | undefined;
  private readonly memoryLog: NodeJS.Timeout;
  /** unitId -> when it was first leased, for udm_unit_duration_seconds (units in flight only). */
  private readonly firstLeased = new Map<string, number>();
  /** Results accepted per model as served (RunStatus.answeredByModel). */
  private readonly answeredByModel = new Map<string, number>();
  /** Records over the unit size limit, committed as errors at start(). */
  private readonly oversize: ReadonlyArray<{ record: RecordEntry; track: string; family: string }>;
  /** The scorer's final track metrics from the bus, as live events (cluster runs with a page). */
  private scores: ScoreFollower | undefined;
  private readonly startedAt = Date.now();
  /** Elapsed time over every session of this --out (run-clock.json). */
  private readonly clock: RunClock;
  /** The live events of every session (run-events.log): replayed at start, appended as they come. */
  private readonly history: EventHistory;
  private fatal: Error | undefined;
  private resolveDone!: (o: RunOutcome) => void;
  private settled = false;
  private shutdownPromise: Promise<void> | undefined;

  constructor(private readonly parts: RunParts) {
    const { options, log, index, store } = parts;
    this.runId = parts.manifest.run_id;
    this.clock = new RunClock(options.outDir, this.runId, (err) => log.warn("run-clock.json not written", { error: err.message }));
    this.history = new EventHistory(options.outDir, (err) => log.warn("run-events.log not written", { error: err.message }));
    this.done = new Promise<RunOutcome>((r) => (this.resolveDone = r));

    // A run that starts while the suite is read gets every track by addTrack, the first ones too.
    const initial = parts.tracksToCome ? [] : index.tracks;
    const toPlan = initial.map((t) => ({ track: t.track, family: t.family, records: t.records.filter((r) => !store.isCommitted(r.recordKey)) }));
    this.progress = new RunProgress({
      tracks: initial.map((t, i) => ({ track: t.track, family: t.family, records: t.records.length, committed: t.records.length - toPlan[i]!.records.length })),
      onCommitted: (line) => {
        // A given-up line has no latency: it took no engine time of its own.
        if (line.usage) this.metrics?.recordLatency(line.usage.latencyMs / 1000);
        this.publisher?.committed(noticeLine(line));
        try {
          options.onCommitted?.(noticeLine(line));
        } catch (err) {
          log.error("onCommitted failed", { error: (err as Error).message });
        }
      },
      onTrackComplete: (p, atStart) => {
        if (!atStart) log.info("track complete", { track: p.track, records: p.records });
        this.publishEvent({ type: "track_complete", at: now(), track: p.track, records: p.records });
        try {
          options.onTrackComplete?.(p.track, p.family);
        } catch (err) {
          log.error("onTrackComplete failed", { track: p.track, error: (err as Error).message });
        }
      },
      onRunComplete: () => this.runComplete(),
      ...(parts.tracksToCome ? { tracksToCome: parts.tracksToCome } : {}),
    });
    const limits = options.planLimits;
    // A record too large to send is committed once with an error per question naming its size
    // (at start()), never offered to an agent, which would refuse the message and reattach for it forever.
    this.oversize = toPlan.flatMap((t) => [...oversizeRecords(t.records, limits)].map((record) => ({ record, track: t.track, family: t.family })));
    if (this.oversize.length > 0) for (const t of toPlan) t.records = t.records.filter((r) => payloadBytes(r) <= limits.maxRecordBytes);
    const units = planUnits(toPlan, limits);
    log.info(parts.manifest.resumes > 0 ? "resuming run" : "new run", {
      run_id: this.runId,
      records: index.totalRecords,
      committed: this.progress.recordsResumed,
      units: units.length,
      repaired: store.repaired.length,
      retrying_errored: store.retrying,
      oversize: this.oversize.length,
    });

    this.publisher = options.bus
      ? new BusPublisher({
          bus: options.bus,
          runId: this.runId,
          outDir: options.outDir,
          tracks: (parts.tracksToCome ?? index.tracks).map((t) => ({ track: t.track, family: t.family })),
          status: () => {
            const s = busStatusOf(this.status(), new Date().toISOString());
            return parts.manifest.run_name !== undefined ? { ...s, runName: parts.manifest.run_name } : s;
          },
          log,
        })
      : undefined;
    this.scheduler = this.createScheduler(units);
    if (parts.tracksToCome) this.scheduler.expectMoreUnits();
    this.runAgents = new RunAgentsRecord(
      options.outDir,
      parts.manifest,
      () => this.scheduler.agentList().map((a) => ({ agentId: a.info.agentId, engineUrl: a.info.engineUrl, model: a.info.model, ready: a.ready })),
      (err) => log.warn("run.json: agents not written", { error: err.message }),
    );
    this.sessions = new AgentSessions({
      scheduler: this.scheduler,
      runId: this.runId,
      method: parts.method,
      leaseMs: parts.leaseMs,
      heartbeatMs: parts.heartbeatMs,
      spill: index.spill,
      state: () => this.lifecycle,
      runEnded: () => this.settled,
      releaseAgentsAtEnd: parts.options.releaseAgentsAtEnd,
      publishEvent: (e) => this.publishEvent(e),
      onAttached: (key) => this.progress.agentAttached(key, Date.now()),
      onDetached: (key) => this.progress.agentDetached(key, Date.now()),
      onReadyChanged: (agentId, ready) => {
        this.runAgents.changed();
        this.liveEvent({ type: "agent_ready", at: now(), agentId, ready });
      },
      log,
    });
    this.registry = options.metrics ? createProcessRegistry("coordinator", { processWide: false }) : undefined;
    this.metrics = this.registry ? this.registerMetrics(this.registry) : undefined;
    this.memoryLog = setInterval(() => {
      const m = process.memoryUsage();
      const mb = (n: number) => Math.round(n / 1048576);
      log.debug("memory", { rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed), heap_total_mb: mb(m.heapTotal), external_mb: mb(m.external), committed: this.progress.recordsCommitted });
    }, 2_000);
    this.memoryLog.unref();
  }

  /** Starts serving: leases tick, the bus is published to, what was complete at start is announced. */
  start(): void {
    this.progress.started(Date.now());
    this.clock.start(Date.now());
    this.runAgents.write();
    this.scheduler.startLeaseClock();
    this.publisher?.start();
    for (const { record, track, family } of this.oversize) this.commitOversize(record, track, family);
    const { bus, onLiveEvent } = this.parts.options;
    if (bus && onLiveEvent) this.scores = followScores(bus, this.runId, (e) => this.liveEvent(e), this.parts.log);
    this.replayHistory();
    this.progress.announceResumed(Date.now());
  }

  /**
   * A track read and verified after the start: what of it is not committed is planned and handed
   * out (its results file was scanned before this, so the store knows what is committed).
   */
  addTrack(track: TrackIndex): void {
    if (this.settled || this.lifecycle !== "running") return;
    const { store, log, options } = this.parts;
    const limits = options.planLimits;
    const records = track.records.filter((r) => !store.isCommitted(r.recordKey));
    const oversize = oversizeRecords(records, limits);
    const units = planUnits([{ track: track.track, family: track.family, records: oversize.size > 0 ? records.filter((r) => !oversize.has(r)) : records }], limits);
    log.info("track read; handing out its units", { track: track.track, records: track.records.length, committed: track.records.length - records.length, units: units.length });
    this.progress.addTrack({ track: track.track, family: track.family, records: track.records.length, committed: track.records.length - records.length }, Date.now());
    for (const record of oversize) this.commitOversize(record, track.track, track.family);
    this.scheduler.addUnits(units);
  }

  /** Every track of the suite is read and verified: the run may now complete. */
  allTracksAdded(): void {
    if (this.settled) return;
    this.scheduler.allUnitsAdded();
    this.progress.allTracksAdded(Date.now());
    if (this.parts.tracksToCome) this.announceResumed();
  }

  state(): CoordinatorState {
    return this.lifecycle;
  }

  openSession(stream: AttachStream): AgentSessionInput {
    return this.sessions.open(stream);
  }

  /** A line the results store made durable. */
  committed(line: CommitNotice): void {
    this.progress.committed(line, Date.now());
  }

  /** A fatal error (disk, ...): the run stops and ends failed. */
  fail(err: Error): void {
    if (this.fatal) return;
    this.fatal = err;
    this.parts.log.error("fatal: stopping the run", { error: err.message });
    void this.shutdown(2_000);
  }

  status(): RunStatus {
    const nowMs = Date.now();
    const { scheduler, progress } = this;
    const c = scheduler.counters;
    const elapsedSeconds = this.clock.elapsedSeconds(nowMs);
    return {
      runId: this.runId,
      // While tracks are still being read, every record read may be committed and the run not complete.
      state: statusState(this.lifecycle, this.lifecycle === "stopped" ? this.outcome().state : undefined, progress.recordsCommitted, progress.complete ? progress.recordsTotal : Infinity),
      suiteIdentity: this.parts.index.identity,
      recordsTotal: progress.recordsTotal,
      recordsCommitted: progress.recordsCommitted,
      recordsResumed: progress.recordsResumed,
      unitsQueued: scheduler.queuedUnits,
      unitsInflight: scheduler.inflightUnits,
      resultsRejected: c.rejected,
      leasesExpired: c.leasesExpired,
      backupUnits: c.backupUnits,
      recordsPerSecond: progress.recordsPerSecond(nowMs),
      elapsedSeconds,
      elapsedBeforeSeconds: this.clock.beforeSeconds,
      agents: scheduler.agentList().map((a) => ({
        agentId: a.info.agentId,
        model: a.info.model,
        ready: a.ready,
        inflightUnits: scheduler.heldBy(a.key),
        credit: a.credit,
        results: a.results,
        rejected: a.rejected,
        engineUrl: a.info.engineUrl,
        inflightRequests: a.inflightRequests,
        engineWaiting: a.engineWaiting,
        engineRunning: a.engineRunning,
      })),
      agentsLeft: this.sessions.leftAgents(nowMs).map((a) => ({
        agentId: a.agentId,
        model: a.model,
        ready: false,
        inflightUnits: 0,
        credit: 0,
        results: a.results,
        rejected: a.rejected,
        engineUrl: a.engineUrl,
        inflightRequests: 0,
        engineWaiting: 0,
        engineRunning: 0,
        left: { reason: a.reason, at: new Date(a.atMs).toISOString() },
      })),
      tracks: progress.trackList(),
      rejectedByReason: { ...c.rejectedByReason },
      resultsDuplicate: c.duplicates,
      recordsGivenUp: c.givenUp,
      totals: progress.totals(nowMs, elapsedSeconds),
      answeredByModel: Object.fromEntries(this.answeredByModel),
    };
  }

  /** Prometheus text of the run's metrics ("" when options.metrics is absent). */
  async metricsText(): Promise<string> {
    return this.registry ? this.registry.metrics() : "";
  }

  outcome(): RunOutcome {
    const { progress } = this;
    return {
      state: runEnd({ committed: progress.recordsCommitted, total: progress.complete ? progress.recordsTotal : Infinity, fatal: this.fatal }),
      runId: this.runId,
      recordsTotal: progress.recordsTotal,
      recordsCommitted: progress.recordsCommitted,
      recordsResumed: progress.recordsResumed,
      recordsErrored: this.parts.store.erroredCount,
      counters: { ...this.scheduler.counters, rejectedByReason: { ...this.scheduler.counters.rejectedByReason } },
      elapsedSeconds: this.clock.elapsedSeconds(Date.now()),
      ...(this.fatal ? { error: this.fatal.message, ...(this.fatal instanceof UsageError || this.fatal instanceof FormatError ? { badInput: true } : {}) } : {}),
    };
  }

  /** Stops handing out units, sends Drain, waits for agents up to graceMs, flushes, shuts down. */
  shutdown(graceMs: number, restart = false): Promise<void> {
    // A restart's agents reattach to the next coordinator; a run that is complete has nothing left
    // for them. A second shutdown that is not a restart (the operator's second signal) tells the
    // agents already told to reattach to stop after all.
    if (this.shutdownPromise && !restart && !this.parts.options.releaseAgentsAtEnd) this.sessions.drainAll("coordinator draining");
    this.shutdownPromise ??= this.stop(graceMs, restart && !this.settled);
    return this.shutdownPromise;
  }

  private async stop(graceMs: number, restart: boolean): Promise<void> {
    const { log, health, store, server, index, lock } = this.parts;
    this.lifecycle = "draining";
    this.progress.stopped(Date.now());
    this.clock.stop(Date.now());
    health.set("NOT_SERVING");
    this.scheduler.stopDispatch();
    if (!this.parts.options.releaseAgentsAtEnd) {
      this.sessions.drainAll(restart ? "coordinator restarting" : "coordinator draining", restart);
      // Agents of a complete run hold nothing it needs (each was told "run complete" at the last
      // commit): its exit does not wait for them to go (an agent whose engine died would hold it
      // for the whole grace). Their streams end below; they stop as drained.
      if (!this.settled) await waitFor(() => this.sessions.size === 0, graceMs);
    } else if (this.settled) {
      // A sweep's run is complete and the next run takes this address: the agents are told so
      // (Drain with reconnect) before their streams end, and come back at a short interval however
      // long the next run takes to start, instead of backing off to 30 s and missing a short run.
      this.sessions.drainAll("run complete; the next run follows on this address", true);
    }
    try {
      await store.close();
    } catch (err) {
      this.fatal ??= err as Error;
    }
    this.scheduler.stop();
    clearInterval(this.memoryLog);
    health.endWatches();
    this.sessions.endAll();
    await new Promise<void>((resolve) => {
      // A complete run's agents were told so and their streams are ended: it does not wait for
      // their connections to close (a loaded machine took half a second), only briefly for calls in flight.
      const force = setTimeout(
        () => {
          server.forceShutdown();
          resolve();
        },
        this.settled ? COMPLETE_SHUTDOWN_MS : 2_000,
      );
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
    index.spill.dispose();
    this.runAgents.close();
    await this.scores?.stop();
    this.lifecycle = "stopped";
    if (this.publisher) {
      const end = this.outcome();
      if (end.state !== "complete") this.publishEvent({ type: "run_complete", at: now(), state: end.state, ...(end.error ? { reason: end.error } : {}) });
      await this.publisher.close();
    }
    lock.release();
    log.info("coordinator stopped", { ...this.outcome(), counters: undefined });
    this.settle();
  }

  private commitOversize(record: RecordEntry, track: string, family: string): void {
    const bytes = payloadBytes(record);
    this.parts.log.warn("record too large to send; committed with every question in errors", { run_id: record.recordKey, bytes });
    this.parts.store.append(givenUpLine(record, track, family, `record payload is ${bytes} bytes, over the limit of ${this.parts.options.planLimits.maxRecordBytes} bytes a work unit may carry`));
  }

  private createScheduler(units: ReturnType<typeof planUnits>): Scheduler {
    const { log, store, index, leaseMs } = this.parts;
    const agentIdOf = (key: string) => this.scheduler.agent(key)?.info.agentId ?? key;
    return new Scheduler(units, {
      leaseMs,
      onUnitComplete: (unit, key) => {
        const leasedAt = this.firstLeased.get(unit.unitId);
        this.firstLeased.delete(unit.unitId);
        if (leasedAt !== undefined) this.metrics?.unitDuration((Date.now() - leasedAt) / 1000);
        this.publishEvent({ type: "unit_done", at: now(), unitId: unit.unitId, track: unit.track, agentId: agentIdOf(key), results: unit.records.length });
      },
      onLeaseExpired: (unitId, key) => {
        this.sessions.leaseExpired(key);
        this.publishEvent({ type: "unit_expired", at: now(), unitId, track: unitId.slice(0, unitId.lastIndexOf("/")), agentId: agentIdOf(key) });
      },
      lookup: (r) => index.byRunId.get(r)?.record,
      onAccept: (result, record, unit, agent) => {
        const qs = RecordQuestions.of(record);
        store.appendAnswer(record, qs, compactAnswerOf(result, qs), unit.track, unit.family, agent.info.agentId);
        this.answeredByModel.set(agent.info.model, (this.answeredByModel.get(agent.info.model) ?? 0) + 1);
      },
      onGiveUp: (record, unit, last) => {
        log.warn("record given up after repeated invalid results; committed with every question in errors", {
          run_id: record.recordKey,
          reason: last.reason,
          detail: last.detail,
        });
        store.append(givenUpLine(record, unit.track, unit.family, `${last.reason}: ${last.detail}`));
      },
      onReject: (agent, result, rejection) => {
        // A faulty agent can send thousands: the first few per agent are warnings, the rest debug.
        const fields = { agent: agent.info.agentId, unit: result.unitId, run_id: result.recordKey, ...rejection };
        if (agent.rejected <= REJECTIONS_LOGGED) log.warn("result rejected", fields);
        else log.debug("result rejected", fields);
        if (agent.rejected === REJECTIONS_LOGGED) log.warn("further rejections of this agent are logged at debug level", { agent: agent.info.agentId });
      },
    });
  }

  private runComplete(): void {
    if (this.settled) return;
    this.parts.log.info("run complete", { run_id: this.runId, records: this.progress.recordsTotal });
    // A complete run's coordinator may go on serving its page: the run's time stops here.
    this.clock.stop(Date.now());
    this.scheduler.stopDispatch();
    if (!this.parts.options.releaseAgentsAtEnd) this.sessions.drainAll("run complete");
    this.publishEvent({ type: "run_complete", at: now(), state: "complete" });
    this.settle();
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveDone(this.outcome());
  }

  private publishEvent(e: BusEvent): void {
    if (e.type === "agent_joined") this.runAgents.joined({ agentId: e.agentId, engineUrl: e.engineUrl ?? "", model: e.model ?? "" });
    else if (e.type === "agent_left") this.runAgents.left(e.agentId, e.reason, e.at);
    if (e.type === "unit_leased" && this.metrics && !this.firstLeased.has(e.unitId)) this.firstLeased.set(e.unitId, Date.now());
    this.publisher?.event(e);
    const live = liveEventOf(e);
    if (live) this.liveEvent(live);
  }

  /**
   * After a restart: the events of the sessions before (replayed, marked so), then (announceResumed)
   * a `resumed` event saying what this session starts from. A first session has no history to replay.
   */
  private replayHistory(): void {
    const earlier = this.history.last(DEFAULT_REPLAY);
    if (this.parts.options.onLiveEvent) for (const e of earlier) this.emitLive({ ...e, replayed: true });
    this.resumedToAnnounce = this.parts.manifest.resumes > 0 || earlier.length > 0;
    // Tracks still to come have not had their committed lines scanned: the count is whole once they are in.
    if (!this.parts.tracksToCome) this.announceResumed();
  }

  private resumedToAnnounce = false;

  private announceResumed(): void {
    if (!this.resumedToAnnounce) return;
    this.resumedToAnnounce = false;
    const resumed: LiveEvent = {
      type: "resumed",
      at: now(),
      session: this.parts.manifest.sessions,
      recordsCommitted: this.progress.recordsResumed,
      recordsTotal: this.progress.recordsTotal,
      elapsedBeforeSeconds: this.clock.beforeSeconds,
    };
    this.parts.log.info("run resumed", { session: resumed.session, committed: resumed.recordsCommitted, records: resumed.recordsTotal, elapsed_before_s: Math.round(resumed.elapsedBeforeSeconds) });
    this.liveEvent(resumed);
  }

  /** A live event of this session: kept in run-events.log (scores are not: metrics.json has them) and shown. */
  private liveEvent(e: LiveEvent): void {
    if (e.type !== "track_scored") this.history.append(e);
    this.emitLive(e);
  }

  private emitLive(e: LiveEvent): void {
    try {
      this.parts.options.onLiveEvent?.(e);
    } catch (err) {
      this.parts.log.error("onLiveEvent failed", { error: (err as Error).message });
    }
  }

  /** The udm_* metrics, read in collect() from this run's status, run totals and sessions. */
  private registerMetrics(registry: Registry): CoordinatorMetrics {
    const { options, index, method } = this.parts;
    const scheduler = this.scheduler;
    return registerCoordinatorMetrics(
      registry,
      {
        status: () => this.status(),
        run: () => ({ runId: this.runId, suiteIdentity: index.identity, method: method.method, model: method.model }),
        startedAtSeconds: () => this.startedAt / 1000,
        lastCommitAtSeconds: () => {
          const at = this.progress.lastCommitAtMs;
          return at === undefined ? undefined : at / 1000;
        },
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
        ...(this.publisher
          ? {
              bus: () => {
                const publisher = this.publisher!;
                return { connected: options.bus!.state === "connected", publishFailures: publisher.counters.failed, behind: publisher.behind };
              },
            }
          : {}),
      },
      options.metrics,
    );
  }
}

/** How long a complete run's server waits for calls in flight before it closes (Status polls are short). */
const COMPLETE_SHUTDOWN_MS = 50;

function now(): string {
  return new Date().toISOString();
}

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() >= until) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}
