// Hands units to agents: credit-based flow (never more units than an agent granted), leases
// renewed by heartbeats and results, requeue of the unanswered rest on expiry or disconnect,
// backup copies at the tail, first result per run_id wins (DESIGN.md "gRPC contract").
import { LeaseTable, type Lease } from "./lease-table.js";
import type { PlannedUnit } from "./planner.js";
import type { IncomingResult } from "./incoming-result.js";
import { validateResult, type RejectReason, type Rejection } from "./result-validator.js";
import type { RecordEntry } from "./suite-index.js";

/** The transport side of one agent connection. */
export interface AgentLink {
  /** False while the stream applies backpressure (write() returned false and no 'drain' yet). */
  writable(): boolean;
  sendUnit(unit: PlannedUnit, records: readonly RecordEntry[], backup: boolean): void;
  sendCancel(unitId: string): void;
}

export interface AgentInfo {
  agentId: string;
  model: string;
  engineUrl: string;
  methods: string[];
  capacity: number;
  maxModelLen: number;
}

export interface AgentSession {
  /** Unique per connection (an agent that reconnects gets a new session). */
  key: string;
  info: AgentInfo;
  link: AgentLink;
  ready: boolean;
  /** Units granted and not yet sent. */
  credit: number;
  results: number;
  rejected: number;
  duplicates: number;
  inflightRequests: number;
  engineWaiting: number;
  engineRunning: number;
}

type UnitStatus = "queued" | "leased" | "done";

interface UnitState {
  unit: PlannedUnit;
  /** run_ids not yet accepted. */
  pending: Set<string>;
  status: UnitStatus;
  /** When the current primary lease began; orders backup candidates (oldest first). */
  leasedAt: number;
}

export interface SchedulerCounters {
  accepted: number;
  rejected: number;
  rejectedByReason: Partial<Record<RejectReason, number>>;
  duplicates: number;
  leasesExpired: number;
  backupUnits: number;
  requeued: number;
  /** Records committed with every question in errors after too many rejected results. */
  givenUp: number;
}

export type ResultOutcome = { kind: "accepted" } | { kind: "duplicate" } | { kind: "rejected"; rejection: Rejection };

export interface SchedulerOptions {
  leaseMs: number;
  /** Run_id -> record, for every record in scope (committed ones included). */
  lookup: (runId: string) => RecordEntry | undefined;
  /** A result passed validation and is the first for its run_id: commit it. */
  onAccept: (result: IncomingResult, record: RecordEntry, unit: PlannedUnit, agent: AgentSession) => void;
  /**
   * A record whose results were rejected `maxRejections` times: commit it with every question in
   * errors, so one faulty answer cannot keep a run from ending (it scores as missing).
   */
  onGiveUp: (record: RecordEntry, unit: PlannedUnit, last: Rejection) => void;
  onReject?: (agent: AgentSession, result: IncomingResult, rejection: Rejection) => void;
  /** Every record of the unit is accepted (for run events); `agentKey` completed it. */
  onUnitComplete?: (unit: PlannedUnit, agentKey: string) => void;
  /** A holder's lease ran out (for run events). */
  onLeaseExpired?: (unitId: string, agentKey: string) => void;
  /** Holders of one unit at once, primary included. Default 2. */
  maxHolders?: number;
  /** Default 5. */
  maxRejections?: number;
  now?: () => number;
}

export class Scheduler {
  private readonly leases: LeaseTable;
  private readonly units = new Map<string, UnitState>();
  private readonly unitOfRun = new Map<string, UnitState>();
  private queue: UnitState[] = [];
  private readonly inflight = new Set<UnitState>();
  private readonly agents = new Map<string, AgentSession>();
  private readonly rejections = new Map<string, number>();
  private dispatching = true;
  private rr = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  readonly counters: SchedulerCounters = {
    accepted: 0,
    rejected: 0,
    rejectedByReason: {},
    duplicates: 0,
    leasesExpired: 0,
    backupUnits: 0,
    requeued: 0,
    givenUp: 0,
  };

  constructor(units: readonly PlannedUnit[], private readonly options: SchedulerOptions) {
    this.leases = new LeaseTable(options.leaseMs);
    this.now = options.now ?? Date.now;
    for (const unit of units) {
      const state: UnitState = { unit, pending: new Set(unit.records.map((r) => r.runId)), status: "queued", leasedAt: 0 };
      this.units.set(unit.unitId, state);
      for (const r of unit.records) this.unitOfRun.set(r.runId, state);
      this.queue.push(state);
    }
  }

  /** Checks leases every quarter lease (at most every second). */
  startLeaseClock(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.expireLeases(), Math.max(10, Math.min(1000, this.options.leaseMs / 4)));
    this.timer.unref();
  }

  stop(): void {
    this.dispatching = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Draining: hand out nothing more; results keep being accepted. */
  stopDispatch(): void {
    this.dispatching = false;
  }

  // ---- agents ----

  attach(key: string, info: AgentInfo, link: AgentLink, ready: boolean): AgentSession {
    const agent: AgentSession = {
      key,
      info,
      link,
      ready,
      credit: 0,
      results: 0,
      rejected: 0,
      duplicates: 0,
      inflightRequests: 0,
      engineWaiting: 0,
      engineRunning: 0,
    };
    this.agents.set(key, agent);
    return agent;
  }

  /** The connection is gone: its leases end now and their unanswered records go back to the queue. */
  detach(key: string): void {
    if (!this.agents.delete(key)) return;
    for (const lease of this.leases.releaseAgent(key)) this.afterRelease(lease);
    this.pump();
  }

  agent(key: string): AgentSession | undefined {
    return this.agents.get(key);
  }

  agentList(): AgentSession[] {
    return [...this.agents.values()];
  }

  /** Units the agent holds now. */
  heldBy(key: string): number {
    return this.leases.countOf(key);
  }

  grantCredit(key: string, units: number): void {
    const agent = this.agents.get(key);
    if (!agent) return;
    agent.credit += units;
    this.pump();
  }

  heartbeat(key: string, hb: { ready: boolean; inflightRequests: number; engineWaiting: number; engineRunning: number }): void {
    const agent = this.agents.get(key);
    if (!agent) return;
    agent.ready = hb.ready;
    agent.inflightRequests = hb.inflightRequests;
    agent.engineWaiting = hb.engineWaiting;
    agent.engineRunning = hb.engineRunning;
    this.leases.renew(key, this.now());
    this.pump();
  }

  // ---- results ----

  result(key: string, result: IncomingResult): ResultOutcome {
    const agent = this.agents.get(key);
    const record = this.options.lookup(result.runId);
    const state = this.unitOfRun.get(result.runId);
    const lease = this.leases.get(result.unitId, key);
    if (record && (!state || !state.pending.has(result.runId))) {
      // Already accepted (from this session, a backup holder, or a previous session): first wins.
      this.counters.duplicates++;
      if (agent) agent.duplicates++;
      if (lease) this.answered(lease, result.runId);
      return { kind: "duplicate" };
    }
    const inUnit = state !== undefined && state.unit.unitId === result.unitId;
    const rejection = validateResult(result, { record, holdsLease: lease !== undefined, inUnit });
    if (rejection) {
      this.counters.rejected++;
      this.counters.rejectedByReason[rejection.reason] = (this.counters.rejectedByReason[rejection.reason] ?? 0) + 1;
      if (agent) {
        agent.rejected++;
        this.options.onReject?.(agent, result, rejection);
      }
      if (lease && inUnit && record && state) {
        const n = (this.rejections.get(result.runId) ?? 0) + 1;
        this.rejections.set(result.runId, n);
        if (n >= (this.options.maxRejections ?? 5)) {
          this.counters.givenUp++;
          this.settle(state, record.runId);
          this.options.onGiveUp(record, state.unit, rejection);
          this.afterSettle(state, key, lease, record.runId);
          return { kind: "rejected", rejection };
        }
        this.answered(lease, result.runId);
      }
      return { kind: "rejected", rejection };
    }
    // validateResult passed, so record, state, lease and agent exist.
    this.counters.accepted++;
    agent!.results++;
    this.settle(state!, result.runId);
    this.leases.renew(key, this.now(), result.unitId);
    this.options.onAccept(result, record!, state!.unit, agent!);
    this.afterSettle(state!, key, lease!, result.runId);
    return { kind: "accepted" };
  }

  /** The agent says it is finished with its copy; whatever it left unanswered is redone. */
  unitDone(key: string, unitId: string): void {
    const lease = this.leases.release(unitId, key);
    if (lease) this.afterRelease(lease);
    this.pump();
  }

  private settle(state: UnitState, runId: string): void {
    state.pending.delete(runId);
    this.rejections.delete(runId);
  }

  private afterSettle(state: UnitState, key: string, lease: Lease, runId: string): void {
    if (state.pending.size === 0) this.complete(state, key);
    else this.answered(lease, runId);
  }

  /** The holder answered one record of its copy; a copy with nothing outstanding is finished. */
  private answered(lease: Lease, runId: string): void {
    lease.outstanding.delete(runId);
    for (const r of [...lease.outstanding]) if (!this.unitOfRun.get(r)?.pending.has(r)) lease.outstanding.delete(r);
    if (lease.outstanding.size === 0 && this.leases.get(lease.unitId, lease.agentKey) === lease) {
      this.leases.release(lease.unitId, lease.agentKey);
      this.afterRelease(lease);
      this.pump();
    }
  }

  private complete(state: UnitState, completedBy: string): void {
    state.status = "done";
    this.inflight.delete(state);
    this.options.onUnitComplete?.(state.unit, completedBy);
    for (const lease of this.leases.releaseUnit(state.unit.unitId)) {
      if (lease.agentKey !== completedBy) this.agents.get(lease.agentKey)?.link.sendCancel(state.unit.unitId);
    }
    this.pump();
  }

  /** A lease ended without completing the unit: with no holder left, the rest goes back to the queue, first. */
  private afterRelease(lease: Lease): void {
    const state = this.units.get(lease.unitId);
    if (!state || state.status !== "leased") return;
    if (state.pending.size === 0) {
      this.complete(state, lease.agentKey);
      return;
    }
    if (this.leases.holderCount(lease.unitId) > 0) return;
    state.status = "queued";
    state.leasedAt = 0;
    this.inflight.delete(state);
    this.queue.unshift(state);
    this.counters.requeued++;
  }

  // ---- leases ----

  expireLeases(): number {
    const expired = this.leases.expired(this.now());
    for (const lease of expired) {
      this.leases.release(lease.unitId, lease.agentKey);
      this.counters.leasesExpired++;
      this.options.onLeaseExpired?.(lease.unitId, lease.agentKey);
      this.agents.get(lease.agentKey)?.link.sendCancel(lease.unitId);
      this.afterRelease(lease);
    }
    if (expired.length > 0) this.pump();
    return expired.length;
  }

  // ---- dispatch ----

  /** Gives units to every agent that is ready, has credit and a writable stream. */
  pump(): void {
    if (!this.dispatching) return;
    let progressed = true;
    while (progressed) {
      progressed = false;
      const agents = [...this.agents.values()];
      for (let i = 0; i < agents.length; i++) {
        const agent = agents[(this.rr + i) % agents.length]!;
        if (!agent.ready || agent.credit <= 0 || !agent.link.writable()) continue;
        const next = this.nextFor(agent.key);
        if (!next) continue;
        this.assign(agent, next.state, next.backup);
        progressed = true;
      }
      this.rr = agents.length > 0 ? (this.rr + 1) % agents.length : 0;
    }
  }

  private nextFor(key: string): { state: UnitState; backup: boolean } | undefined {
    while (this.queue.length > 0) {
      const state = this.queue.shift()!;
      if (state.status === "queued" && state.pending.size > 0) return { state, backup: false };
    }
    let best: UnitState | undefined;
    const maxHolders = this.options.maxHolders ?? 2;
    for (const s of this.inflight) {
      if (s.pending.size === 0 || this.leases.get(s.unit.unitId, key) || this.leases.holderCount(s.unit.unitId) >= maxHolders) continue;
      if (!best || s.leasedAt < best.leasedAt) best = s;
    }
    return best ? { state: best, backup: true } : undefined;
  }

  private assign(agent: AgentSession, state: UnitState, backup: boolean): void {
    const records = state.unit.records.filter((r) => state.pending.has(r.runId));
    const now = this.now();
    this.leases.grant(state.unit.unitId, agent.key, records.map((r) => r.runId), backup, now);
    agent.credit--;
    if (!backup) {
      state.status = "leased";
      state.leasedAt = now;
      this.inflight.add(state);
    } else this.counters.backupUnits++;
    agent.link.sendUnit(state.unit, records, backup);
  }

  // ---- figures ----

  get queuedUnits(): number {
    let n = 0;
    for (const s of this.queue) if (s.status === "queued" && s.pending.size > 0) n++;
    return n;
  }

  /** Leases held now, primary and backup copies. */
  get leaseCount(): number {
    return this.leases.size;
  }

  get inflightUnits(): number {
    return this.inflight.size;
  }

  get pendingRecords(): number {
    let n = 0;
    for (const s of this.units.values()) n += s.pending.size;
    return n;
  }
}
