// Hands units to agents: credit-based flow (never more units than an agent granted), leases
// renewed by heartbeats and results, requeue of the unanswered rest on expiry, disconnect or an
// agent turning not ready (its engine stopped answering), backup copies at the tail, first result
// per run_id wins (docs/design.md "gRPC contract"). Once agents' paces are known (agent-pace.ts), what
// each may hold and the size of what it is given shrink towards the end (tail-policy.ts), so agents
// of uneven speed finish together.
import { LeaseTable, type Lease } from "./lease-table.js";
import { recordCost, type PlannedUnit } from "./planner.js";
import { AgentPace, TokensPerCost, resultTokens } from "./agent-pace.js";
import { BACKUP_GAIN, CUT_OVER, horizonS, pieceS } from "./tail-policy.js";
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
  /** The agent process (Hello.instance); "" from agents that do not send it. */
  instance: string;
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
  /** Its engine's pace, from the tokens of its results. */
  pace: AgentPace;
  /** Skipped by the last pump because it held enough: looked at again as its results come. */
  heldBack: boolean;
}

type UnitStatus = "queued" | "leased" | "done";

interface UnitState {
  unit: PlannedUnit;
  /** run_ids not yet accepted. */
  pending: Set<string>;
  status: UnitStatus;
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
  /** Records given back unanswered by agents whose engine stopped answering, requeued at once. */
  handedBack: number;
  /** Pieces cut off units near the end of the run (tail-policy.ts). */
  piecesCut: number;
}

export type ResultOutcome = { kind: "accepted" } | { kind: "duplicate" } | { kind: "rejected"; rejection: Rejection };

export interface SchedulerOptions {
  leaseMs: number;
  /** Run_id -> record, for every record in scope (committed ones included). */
  lookup: (recordKey: string) => RecordEntry | undefined;
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
  private readonly unitOfRecord = new Map<string, UnitState>();
  // Stryker disable next-line ArrayDeclaration: an entry that is not a UnitState is skipped as not queued (nextFor, queuedUnits)
  private queue: UnitState[] = [];
  /** Leased units, in the order their current primary lease began (oldest first: backup candidates). */
  private readonly inflight = new Set<UnitState>();
  private readonly agents = new Map<string, AgentSession>();
  private readonly rejections = new Map<string, number>();
  private readonly tokensPerCost = new TokensPerCost();
  /** Planner cost of every record not yet accepted. */
  private pendingCost = 0;
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
    handedBack: 0,
    piecesCut: 0,
  };

  constructor(units: readonly PlannedUnit[], private readonly options: SchedulerOptions) {
    this.leases = new LeaseTable(options.leaseMs);
    this.now = options.now ?? Date.now;
    this.enqueue(units);
  }

  /**
   * While tracks are still being read the end is not in sight: the tail rule (pieces, holding
   * back) waits for allUnitsAdded(), or it would cut the first tracks' units as if they were the last.
   */
  private moreToCome = false;

  /** More units will come (addUnits) until allUnitsAdded(). */
  expectMoreUnits(): void {
    this.moreToCome = true;
  }

  allUnitsAdded(): void {
    this.moreToCome = false;
    this.pump();
  }

  /** Units of a track read after the start (the suite is read while the run serves): queued behind the rest, then handed out. */
  addUnits(units: readonly PlannedUnit[]): void {
    this.enqueue(units);
    this.pump();
  }

  private enqueue(units: readonly PlannedUnit[]): void {
    for (const unit of units) {
      const state: UnitState = { unit, pending: new Set(unit.records.map((r) => r.recordKey)), status: "queued" };
      this.units.set(unit.unitId, state);
      for (const r of unit.records) {
        this.unitOfRecord.set(r.recordKey, state);
        this.pendingCost += recordCost(r);
      }
      this.queue.push(state);
    }
  }

  /** Checks leases every quarter lease (at most every second). */
  startLeaseClock(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.expireLeases();
      this.tickPaces();
    }, Math.max(10, Math.min(1000, this.options.leaseMs / 4)));
    this.timer.unref();
  }

  stop(): void {
    this.dispatching = false;
    clearInterval(this.timer);
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
      pace: new AgentPace(),
      heldBack: false,
    };
    // Stryker disable next-line BooleanLiteral: the first tick only notes the time (there is no earlier one to fold)
    agent.pace.tick(this.now(), false);
    this.agents.set(key, agent);
    return agent;
  }

  /** The connection is gone: its leases end now and their unanswered records go back to the queue. */
  detach(key: string): void {
    if (!this.agents.delete(key)) return;
    for (const lease of this.leases.releaseAgent(key)) this.afterRelease(lease);
    this.pump();
  }

  /**
   * The agent's engine stopped answering: every lease it holds ends now and the unanswered records
   * go back to the queue, first (not at lease expiry). Returns the records given back.
   */
  private handBack(key: string): number {
    let records = 0;
    for (const lease of this.leases.releaseAgent(key)) {
      records += this.pendingOf(lease);
      this.afterRelease(lease);
    }
    this.counters.handedBack += records;
    return records;
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
    const wasReady = agent.ready;
    agent.ready = hb.ready;
    // An agent that hands its units back itself (UnitDone handed_back) holds none by now; this
    // covers one that does not.
    if (wasReady && !hb.ready) this.handBack(key);
    agent.inflightRequests = hb.inflightRequests;
    agent.engineWaiting = hb.engineWaiting;
    agent.engineRunning = hb.engineRunning;
    this.leases.renew(key, this.now());
    this.pump();
  }

  // ---- results ----

  result(key: string, result: IncomingResult): ResultOutcome {
    const agent = this.agents.get(key);
    const record = this.options.lookup(result.recordKey);
    const state = this.unitOfRecord.get(result.recordKey);
    const lease = this.leases.get(result.unitId, key);
    if (agent) agent.pace.addTokens(resultTokens(result));
    if (record && (!state || !state.pending.has(result.recordKey))) {
      // Already accepted (from this session, a backup holder, or a previous session): first wins.
      this.counters.duplicates++;
      if (agent) agent.duplicates++;
      if (lease) this.answered(lease, result.recordKey, record, state);
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
        const n = (this.rejections.get(result.recordKey) ?? 0) + 1;
        this.rejections.set(result.recordKey, n);
        if (n >= (this.options.maxRejections ?? 5)) {
          this.counters.givenUp++;
          this.settle(state, record.recordKey, record);
          this.options.onGiveUp(record, state.unit, rejection);
          this.answered(lease, record.recordKey, record, state);
          return { kind: "rejected", rejection };
        }
        this.answered(lease, result.recordKey, record, state);
      }
      return { kind: "rejected", rejection };
    }
    // validateResult passed, so record, state, lease and agent exist.
    this.counters.accepted++;
    agent!.results++;
    this.tokensPerCost.add(resultTokens(result), recordCost(record!));
    this.settle(state!, result.recordKey, record);
    this.leases.renew(key, this.now(), result.unitId);
    this.options.onAccept(result, record!, state!.unit, agent!);
    this.answered(lease!, result.recordKey, record, state);
    if (agent!.heldBack) this.pumpAgent(agent!);
    return { kind: "accepted" };
  }

  /** The agent says it is finished with its copy; whatever it left unanswered is redone. */
  unitDone(key: string, unitId: string): void {
    const lease = this.leases.release(unitId, key);
    if (lease) this.afterRelease(lease);
    this.pump();
  }

  /** `record`: the record of `recordKey` where the caller has it (lookup is a map of every run_id). */
  private settle(state: UnitState, recordKey: string, record = this.options.lookup(recordKey)): void {
    state.pending.delete(recordKey);
    // Every copy that carried the record is owed it no more: its holder's next answer drops it.
    // Stryker disable next-line ConditionalExpression: counting a copy without the record only walks it when there is nothing to drop
    for (const lease of this.leases.leasesOf(state.unit.unitId)) if (lease.outstanding.has(recordKey)) lease.settledElsewhere++;
    this.rejections.delete(recordKey);
    // Stryker disable next-line ConditionalExpression: a settled record is always one lookup knows
    if (record) this.pendingCost -= recordCost(record);
  }

  /** Records of the lease's copy still waiting for an answer from anyone. */
  private pendingOf(lease: Lease): number {
    let n = 0;
    // Every record a copy carried has its unit (entries of unitOfRecord are never removed).
    for (const r of lease.outstanding) if (this.unitOfRecord.get(r)!.pending.has(r)) n++;
    return n;
  }

  /**
   * The holder answered one record of its copy; a copy with nothing outstanding is finished (and
   * with the unit's last record settled, so is the unit: afterRelease).
   */
  private answered(lease: Lease, recordKey: string, record: RecordEntry | undefined, state: UnitState | undefined): void {
    this.dropOutstanding(lease, recordKey, record, state);
    // Records another holder answered meanwhile are owed no more (deleting the entry a Set's
    // iteration is at is safe: no copy of the set per answer). The walk is only where there are
    // some: walking every answer's copy cost a unit of n records n²/2 lookups.
    // Stryker disable next-line ConditionalExpression,EqualityOperator: walking when there is nothing to drop drops nothing (the old way, only slower)
    if (lease.settledElsewhere > 0) for (const r of lease.outstanding) if (!this.unitOfRecord.get(r)!.pending.has(r)) this.dropOutstanding(lease, r, this.options.lookup(r), undefined);
    if (lease.outstanding.size === 0 && this.leases.get(lease.unitId, lease.agentKey) === lease) {
      this.leases.release(lease.unitId, lease.agentKey);
      this.afterRelease(lease);
      this.pump();
    }
  }

  /** `record`: the record of `recordKey`; `state`: its unit's state where the caller has it. */
  private dropOutstanding(lease: Lease, recordKey: string, record: RecordEntry | undefined, state: UnitState | undefined): void {
    if (!lease.outstanding.delete(recordKey)) return;
    // Stryker disable next-line ConditionalExpression,UpdateOperator,BooleanLiteral: a count left too high only walks `outstanding` when there is nothing to drop (too low is killed)
    if (!(state ?? this.unitOfRecord.get(recordKey)!).pending.has(recordKey)) lease.settledElsewhere--;
    // Stryker disable next-line ConditionalExpression: an outstanding record is always one lookup knows
    if (record) lease.cost = Math.max(0, lease.cost - recordCost(record));
  }

  private complete(state: UnitState, completedBy: string): void {
    // Stryker disable next-line StringLiteral: only "queued" and "leased" are asked for; any other status reads as done
    state.status = "done";
    this.inflight.delete(state);
    this.options.onUnitComplete?.(state.unit, completedBy);
    // The other holders of a copy: the completer's own lease was released before (afterRelease's callers).
    for (const lease of this.leases.releaseUnit(state.unit.unitId)) {
      // Stryker disable next-line OptionalChaining: a holder is always attached (detach releases its leases first)
      this.agents.get(lease.agentKey)?.link.sendCancel(state.unit.unitId);
    }
    this.pump();
  }

  /** A lease ended: with nothing pending the unit is complete; else with no holder left, the rest goes back to the queue, first. */
  private afterRelease(lease: Lease): void {
    const state = this.units.get(lease.unitId);
    // Stryker disable next-line ConditionalExpression,LogicalOperator: a lease released here is always of a known unit still leased (a complete unit's leases are released by complete(), not here)
    if (!state || state.status !== "leased") return;
    if (state.pending.size === 0) {
      this.complete(state, lease.agentKey);
      return;
    }
    if (this.leases.holderCount(lease.unitId) > 0) return;
    state.status = "queued";
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
      // Stryker disable next-line OptionalChaining: a holder is always attached (detach releases its leases first)
      this.agents.get(lease.agentKey)?.link.sendCancel(lease.unitId);
      this.afterRelease(lease);
    }
    if (expired.length > 0) this.pump();
    return expired.length;
  }

  // ---- pace ----

  /** Folds the time since the last tick into every agent's pace (lease clock). */
  tickPaces(): void {
    const now = this.now();
    for (const agent of this.agents.values()) agent.pace.tick(now, agent.ready && this.leases.countOf(agent.key) > 0);
    this.pump();
  }

  /** Seconds `cost` of planner cost takes the agent; undefined while its pace is unknown. */
  private secondsFor(agent: AgentSession, cost: number): number | undefined {
    const rate = agent.pace.tokensPerS;
    const tpc = this.tokensPerCost.value;
    // Stryker disable next-line ConditionalExpression: a known pace comes with accepted results, so with tokens per cost
    return rate === undefined || tpc === undefined ? undefined : (cost * tpc) / rate;
  }

  /** Planner cost the agent does in `seconds`; undefined while its pace is unknown. */
  private costIn(agent: AgentSession, seconds: number): number | undefined {
    const rate = agent.pace.tokensPerS;
    const tpc = this.tokensPerCost.value;
    // Stryker disable next-line ConditionalExpression: a known pace comes with accepted results, so with tokens per cost
    return rate === undefined || tpc === undefined ? undefined : (seconds * rate) / tpc;
  }

  /** Planner cost the slowest ready agent of known pace does in `seconds`; undefined if none is known. */
  private slowestCostIn(seconds: number): number | undefined {
    let min: number | undefined;
    for (const a of this.agents.values()) {
      if (!a.ready) continue;
      const c = this.costIn(a, seconds);
      if (c !== undefined) min = min === undefined ? c : Math.min(min, c);
    }
    return min;
  }

  /** Planner cost of what the agent holds and has not answered. */
  private heldCost(key: string): number {
    let cost = 0;
    // Stryker disable next-line OptionalChaining: the lease table lists only units the agent holds
    for (const u of this.leases.unitsOf(key)) cost += this.leases.get(u, key)?.cost ?? 0;
    return cost;
  }

  /**
   * Seconds until every record is accepted if the ready agents shared the rest evenly; undefined
   * while no pace is known. Agents of unknown pace count at the mean known one.
   */
  private remainingS(): number | undefined {
    const tpc = this.tokensPerCost.value;
    // Stryker disable next-line ConditionalExpression: no agent has a known pace before a result was accepted (tokens per cost)
    if (tpc === undefined || this.moreToCome) return undefined;
    let known = 0;
    let sum = 0;
    let unknown = 0;
    for (const a of this.agents.values()) {
      if (!a.ready) continue;
      const r = a.pace.tokensPerS;
      if (r === undefined) unknown++;
      else {
        known++;
        sum += r;
      }
    }
    // Stryker disable next-line ConditionalExpression: without a known pace the asking agent's own pace is unknown too: no hold-back, no piece, whatever the time left
    if (known === 0) return undefined;
    const total = sum + (unknown * sum) / known;
    return (this.pendingCost * tpc) / total;
  }

  // ---- dispatch ----

  /** Gives units to every agent that is ready, has credit and a writable stream. */
  pump(): void {
    if (!this.dispatching) return;
    const remaining = this.remainingS();
    let progressed = true;
    while (progressed) {
      progressed = false;
      const agents = [...this.agents.values()];
      for (let i = 0; i < agents.length; i++) {
        if (this.giveOne(agents[(this.rr + i) % agents.length]!, remaining)) progressed = true;
      }
      this.rr = agents.length > 0 ? (this.rr + 1) % agents.length : 0;
    }
  }

  /** Gives one agent what it may take now. */
  private pumpAgent(agent: AgentSession): void {
    if (!this.dispatching) return;
    const remaining = this.remainingS();
    while (this.giveOne(agent, remaining));
  }

  /** One unit (or piece, or backup copy) to the agent if it may take one; true if it got one. */
  private giveOne(agent: AgentSession, remaining: number | undefined): boolean {
    if (!agent.ready || agent.credit <= 0 || !agent.link.writable()) return false;
    // An agent holding more than it does in the horizon waits: the rest may go to one that is
    // free sooner. One that holds nothing always gets work.
    // Its own work comes first: a backup copy (nextFor) counts it too, tail or not.
    const heldS = this.secondsFor(agent, this.heldCost(agent.key)) ?? 0;
    // Before the tail (time left unknown) the horizon is endless.
    if (heldS >= horizonS(remaining ?? Infinity)) {
      agent.heldBack = true;
      return false;
    }
    agent.heldBack = false;
    const next = this.nextFor(agent, remaining, heldS);
    if (!next) return false;
    this.assign(agent, next.state, next.backup);
    return true;
  }

  private nextFor(agent: AgentSession, remaining: number | undefined, heldS: number): { state: UnitState; backup: boolean } | undefined {
    while (this.queue.length > 0) {
      const state = this.queue.shift()!;
      // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: the queue holds only queued units with records pending (a unit is queued once, and only with records pending)
      if (state.status !== "queued" || state.pending.size === 0) continue;
      return { state: this.pieceFor(agent, state, remaining), backup: false };
    }
    return this.backupFor(agent, heldS);
  }

  /**
   * Near the end, a unit that would take this agent longer than a piece (tail-policy.ts) is cut:
   * the agent gets its first records, the rest stays first in the queue for whoever is free next.
   */
  private pieceFor(agent: AgentSession, state: UnitState, remaining: number | undefined): UnitState {
    if (remaining === undefined) return state;
    // A piece is whole groups: a group is never split (its records share one agent's prefix cache,
    // docs/design.md), so a unit of one group goes whole.
    const groups = new Map<string, RecordEntry[]>();
    for (const r of state.unit.records) if (state.pending.has(r.recordKey)) (groups.get(r.groupId) ?? groups.set(r.groupId, []).get(r.groupId)!).push(r);
    if (groups.size < 2) return state;
    const byGroup = [...groups.values()];
    const costOf = (rs: readonly RecordEntry[]) => rs.reduce((n, r) => n + recordCost(r), 0);
    const cost = costOf(byGroup.flat());
    const limitS = pieceS(remaining);
    const own = this.costIn(agent, limitS);
    if (own === undefined) return state;
    // No bigger than what the slowest ready agent does in a piece's time either: a fast agent's
    // last work is then several small units, one of which an agent that runs dry can back up and
    // finish sooner (its cancel frees the fast engine for the rest), instead of one big piece only
    // the fast agent can do.
    const want = Math.min(own, this.slowestCostIn(limitS) ?? own);
    if (cost <= CUT_OVER * want) return state;
    let take = 0;
    let taken = 0;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: the piece never reaches the last group anyway: a unit is cut only when it costs over 1.5 pieces
    while (take < byGroup.length - 1 && (take === 0 || taken + costOf(byGroup[take]!) <= want)) taken += costOf(byGroup[take++]!);
    const head = byGroup.slice(0, take).flat();
    const rest = byGroup.slice(take).flat();
    const unit = state.unit;
    const piece: PlannedUnit = {
      ...unit,
      unitId: `${unit.unitId}~${++this.counters.piecesCut}`,
      groupIds: [...new Set(head.map((r) => r.groupId))],
      records: head,
      cost: taken,
      questions: head.reduce((n, r) => n + r.questionCount, 0),
    };
    // Stryker disable next-line StringLiteral: the piece is assigned at once, which sets its status
    const pieceState: UnitState = { unit: piece, pending: new Set(head.map((r) => r.recordKey)), status: "queued" };
    this.units.set(piece.unitId, pieceState);
    for (const r of head) {
      this.unitOfRecord.set(r.recordKey, pieceState);
      state.pending.delete(r.recordKey);
    }
    state.unit = { ...unit, groupIds: [...new Set(rest.map((r) => r.groupId))], records: rest, cost: cost - taken, questions: rest.reduce((n, r) => n + r.questionCount, 0) };
    this.queue.unshift(state);
    return pieceState;
  }

  /**
   * The queue is empty: a backup copy of a unit in flight. With paces known, of the unit whose
   * holder would finish it latest, and only if this agent would finish it clearly sooner; else the
   * oldest leased.
   */
  private backupFor(agent: AgentSession, heldS: number): { state: UnitState; backup: boolean } | undefined {
    const maxHolders = this.options.maxHolders ?? 2;
    let best: UnitState | undefined;
    let bestGain = 0;
    let oldest: UnitState | undefined;
    // Stryker disable next-line ConditionalExpression: an agent of unknown pace gets no time for the unit (mineS), which turns paced off all the same
    let paced = agent.pace.tokensPerS !== undefined;
    for (const s of this.inflight) {
      // (A unit in flight has records pending: it leaves the set when its last one settles.)
      if (this.leases.get(s.unit.unitId, agent.key) || this.leases.holderCount(s.unit.unitId) >= maxHolders) continue;
      oldest ??= s;
      // Stryker disable next-line ConditionalExpression: going on unpaced only computes times that are not used (the oldest is chosen)
      if (!paced) continue;
      // The soonest holder's time (a candidate has one at least); unknown if any holder's is.
      let holderS: number | undefined = Infinity;
      for (const l of this.leases.holders(s.unit.unitId)) {
        const holder = this.agents.get(l.agentKey);
        const t = holder ? this.secondsFor(holder, this.heldCost(holder.key)) : undefined;
        if (t === undefined) {
          holderS = undefined;
          break;
        }
        holderS = Math.min(holderS, t);
      }
      const mineS = this.secondsFor(agent, this.pendingCostOf(s));
      // Stryker disable next-line ConditionalExpression: mineS is unknown only for an agent of unknown pace, which never gets here (paced is false from the start)
      if (holderS === undefined || mineS === undefined) {
        paced = false;
        continue;
      }
      const gain = holderS - (heldS + mineS);
      if (heldS + mineS < BACKUP_GAIN * holderS && gain > bestGain) {
        best = s;
        bestGain = gain;
      }
    }
    const chosen = paced ? best : oldest;
    return chosen ? { state: chosen, backup: true } : undefined;
  }

  private pendingCostOf(state: UnitState): number {
    let cost = 0;
    for (const r of state.unit.records) if (state.pending.has(r.recordKey)) cost += recordCost(r);
    return cost;
  }

  private assign(agent: AgentSession, state: UnitState, backup: boolean): void {
    const records = state.unit.records.filter((r) => state.pending.has(r.recordKey));
    const now = this.now();
    const cost = records.reduce((n, r) => n + recordCost(r), 0);
    this.leases.grant(state.unit.unitId, agent.key, records.map((r) => r.recordKey), backup, now, cost);
    agent.credit--;
    if (!backup) {
      state.status = "leased";
      this.inflight.add(state);
    } else this.counters.backupUnits++;
    agent.link.sendUnit(state.unit, records, backup);
  }

  // ---- figures ----

  get queuedUnits(): number {
    let n = 0;
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: the queue holds only queued units with records pending
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
