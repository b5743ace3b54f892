// The agents attached to a run: one session per Attach stream, from Hello (welcome, hand to the
// scheduler, supersede an older stream of the same agent) to its end (leases released at once).
import type { BusEvent } from "../common/bus/index.js";
import type { Logger } from "../common/log.js";
import { AgentConnection } from "./transport/agent-connection.js";
import type { AgentSessionInput, AttachStream, StreamEnd } from "./transport/grpc-service.js";
import { LeftAgents, type LeftAgent } from "./left-agents.js";
import type { CoordinatorState } from "./lifecycle.js";
import type { PayloadSpill } from "./payload-spill.js";
import { grpcStatusOf, Refusal } from "./transport/refusal.js";
import type { MethodConfig } from "./run-manifest.js";
import type { Scheduler } from "./scheduler.js";
import { welcomeToWire, workUnitToWire, type AgentEvent } from "./transport/wire.js";

export interface AgentSessionsOptions {
  scheduler: Scheduler;
  runId: string;
  method: MethodConfig;
  leaseMs: number;
  heartbeatMs: number;
  spill: PayloadSpill;
  /** The coordinator's lifecycle state; agents are taken only while running. */
  state: () => CoordinatorState;
  /** True once the run has ended (complete): new agents are told to drain at once. */
  runEnded: () => boolean;
  /** A sweep's runs follow each other on one address: at the end agents are let go, not drained. */
  releaseAgentsAtEnd: boolean;
  publishEvent: (e: BusEvent) => void;
  onAttached: (key: string) => void;
  onDetached: (key: string) => void;
  /** An attached agent's engine became ready or stopped being ready (heartbeat). */
  onReadyChanged: (agentId: string, ready: boolean) => void;
  log: Logger;
}

/** How long after its stream's end an agent's connection may still turn out lost (see open()). */
const END_SETTLE_MS = 100;

export class AgentSessions {
  private readonly connections = new Map<string, AgentConnection>();
  /** Per connection key: when the agent was last heard from, and when a lease of it last expired. */
  private readonly heard = new Map<string, { lastMs: number; leaseExpiredMs?: number }>();
  private readonly departed = new LeftAgents();
  private seq = 0;

  constructor(private readonly options: AgentSessionsOptions) {}

  get size(): number {
    return this.connections.size;
  }

  /**
   * A run that names its model gets no work done by an engine serving another (one restarting
   * with the run's model reports it in its next Hello).
   */
  private servesRunModel(served: string): boolean {
    const wanted = this.options.method.model;
    return !wanted || served === wanted;
  }

  open(stream: AttachStream): AgentSessionInput {
    const state = this.options.state();
    if (state !== "running") throw new Refusal("unavailable", `coordinator is ${state}`);
    let conn: AgentConnection | undefined;
    let endTimer: NodeJS.Timeout | undefined;
    return {
      receive: (event) => {
        if (event.kind === "hello") {
          if (!conn) conn = this.hello(stream, event); // a repeated Hello changes nothing
          return;
        }
        if (!conn) throw new Refusal("protocol", "the first message must be Hello");
        const h = this.heard.get(conn.key);
        if (h) h.lastMs = Date.now();
        this.dispatch(conn.key, event);
      },
      closed: (how) => {
        if (!conn) return;
        // A killed agent's stream reads as ended too, then cancelled a moment later: an end is taken
        // as the agent's own only when no cancel follows within END_SETTLE_MS.
        if (how === "end") {
          const c = conn;
          endTimer ??= setTimeout(() => this.gone(c, "end"), END_SETTLE_MS);
          return;
        }
        clearTimeout(endTimer);
        this.gone(conn, how);
      },
    };
  }

  /** Whether agents told to drain are to reattach (a restart) rather than stop. */
  private drainReconnect = false;

  /** Tells every agent to finish what it holds and stop, or with `reconnect` to reattach later (a restart). */
  drainAll(reason: string, reconnect = false): void {
    this.drainReconnect = reconnect;
    for (const c of this.connections.values()) c.sendDrain(reason, reconnect);
  }

  /** A lease of this connection expired (its agent went quiet): a departure after it says so. */
  leaseExpired(key: string): void {
    const h = this.heard.get(key);
    if (h) h.leaseExpiredMs = Date.now();
  }

  /** Agents that left lately (left-agents.ts), oldest first. */
  leftAgents(nowMs: number): LeftAgent[] {
    return this.departed.list(nowMs);
  }

  endAll(): void {
    for (const c of this.connections.values()) c.end();
  }

  private hello(stream: AttachStream, event: Extract<AgentEvent, { kind: "hello" }>): AgentConnection {
    const o = this.options;
    const info = event.info;
    info.agentId ||= stream.getPeer();
    // The same agent process connecting again (network blip): its old stream's leases are released
    // now. Another process may not take over a live agent_id (a copied --agent-id, or a token
    // holder impersonating an agent): it is refused and retries until the id is free.
    // An agent_id has at most one live connection: each Hello supersedes the one before it.
    const old = [...this.connections.values()].find((c) => c.agentId === info.agentId);
    if (old && old.instance !== info.instance) {
      o.log.warn("refused an agent: its agent_id is attached from another process", { agent: info.agentId, peer: stream.getPeer() });
      throw new Refusal("agent-id-in-use", `agent_id ${info.agentId} is attached from another agent process; give each agent its own --agent-id`);
    }
    if (old) {
      this.forget(old);
      old.end(grpcStatusOf(new Refusal("superseded", "superseded by a newer connection of the same agent")));
    }
    const conn = new AgentConnection(`${info.agentId}#${++this.seq}`, info.agentId, info.instance, stream, {
      unitMessage: (unit, records, backup) => {
        o.publishEvent({ type: "unit_leased", at: now(), unitId: unit.unitId, track: unit.track, agentId: info.agentId, records: records.length, ...(backup ? { backup } : {}) });
        return workUnitToWire(unit, records, backup, o.leaseMs, o.spill);
      },
      onWritable: () => o.scheduler.pump(),
    });
    this.connections.set(conn.key, conn);
    this.heard.set(conn.key, { lastMs: Date.now() });
    this.departed.back(info.agentId);
    o.onAttached(conn.key);
    conn.send(welcomeToWire(o.runId, o.method, o.leaseMs, o.heartbeatMs));
    const servesRunModel = this.servesRunModel(info.model);
    o.scheduler.attach(conn.key, info, conn, event.ready && servesRunModel);
    o.publishEvent({ type: "agent_joined", at: now(), agentId: info.agentId, model: info.model, engineUrl: info.engineUrl });
    o.log.info("agent attached", { agent: info.agentId, model: info.model, ready: event.ready, engine: info.engineUrl });
    if (!servesRunModel) o.log.info("agent's engine serves another model than the run's: sent nothing until it serves it", { agent: info.agentId, engine: info.model, run: o.method.model });
    const ended = o.runEnded();
    if ((ended || o.state() !== "running") && !o.releaseAgentsAtEnd) {
      const reconnect = !ended && this.drainReconnect;
      conn.sendDrain(ended ? "run complete" : reconnect ? "coordinator restarting" : "coordinator draining", reconnect);
    }
    return conn;
  }

  private dispatch(key: string, event: Exclude<AgentEvent, { kind: "hello" }>): void {
    const scheduler = this.options.scheduler;
    switch (event.kind) {
      case "credit":
        scheduler.grantCredit(key, event.units);
        break;
      case "result":
        scheduler.result(key, event.result);
        break;
      case "results":
        for (const result of event.results) scheduler.result(key, result);
        break;
      case "unitDone":
        scheduler.unitDone(key, event.unitId);
        break;
      case "heartbeat": {
        const agent = scheduler.agent(key);
        const wasReady = agent?.ready;
        const ready = event.heartbeat.ready && agent !== undefined && this.servesRunModel(agent.info.model);
        scheduler.heartbeat(key, { ...event.heartbeat, ready });
        if (agent && wasReady !== ready) this.options.onReadyChanged(agent.info.agentId, ready);
        break;
      }
      case "other":
        break;
    }
  }

  private gone(conn: AgentConnection, how: StreamEnd): void {
    if (this.connections.get(conn.key) === conn) {
      const o = this.options;
      const agent = o.scheduler.agent(conn.key);
      const units = o.scheduler.heldBy(conn.key);
      const reason = this.leaveReason(conn, how);
      this.forget(conn);
      const atMs = Date.now();
      if (agent) this.departed.left({ agentId: conn.agentId, model: agent.info.model, engineUrl: agent.info.engineUrl, results: agent.results, rejected: agent.rejected, reason, atMs });
      // A departure the run did not ask for is a loss an operator wants to see: a warning.
      const expected = conn.toldToDrain || o.runEnded() || o.state() !== "running";
      const fields = { agent: conn.agentId, reason, units_requeued: units, results: agent?.results ?? 0 };
      if (expected) o.log.info("agent left", fields);
      else o.log.warn("agent left", fields);
      o.publishEvent({ type: "agent_left", at: new Date(atMs).toISOString(), agentId: conn.agentId, reason });
    }
    this.options.scheduler.detach(conn.key);
    conn.end();
  }

  /**
   * Why an agent left, as the stream's end tells it: told to drain, closed by the agent itself
   * (it stopped), or lost (killed, network, keepalive found it gone), after its leases expired
   * when it had gone quiet first.
   */
  private leaveReason(conn: AgentConnection, how: StreamEnd): string {
    if (conn.toldToDrain) return "drained";
    if (this.options.runEnded()) return "run ended";
    const h = this.heard.get(conn.key);
    const quietS = h ? Math.round((Date.now() - h.lastMs) / 1000) : 0;
    if (h?.leaseExpiredMs !== undefined && h.leaseExpiredMs > h.lastMs) return `lease expired (no message for ${quietS} s), then connection lost`;
    if (how === "end") return "stream ended by the agent";
    return "connection lost (agent killed or unreachable)";
  }

  private forget(conn: AgentConnection): void {
    this.connections.delete(conn.key);
    this.heard.delete(conn.key);
    this.options.scheduler.detach(conn.key);
    this.options.onDetached(conn.key);
  }
}

function now(): string {
  return new Date().toISOString();
}
