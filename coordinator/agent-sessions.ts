// The agents attached to a run: one session per Attach stream, from Hello (welcome, hand to the
// scheduler, supersede an older stream of the same agent) to its end (leases released at once).
import type { BusEvent } from "../common/bus/index.js";
import type { Logger } from "../common/log.js";
import { AgentConnection } from "./transport/agent-connection.js";
import type { AgentSessionInput, AttachStream } from "./transport/grpc-service.js";
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

export class AgentSessions {
  private readonly connections = new Map<string, AgentConnection>();
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
    return {
      receive: (event) => {
        if (event.kind === "hello") {
          if (!conn) conn = this.hello(stream, event); // a repeated Hello changes nothing
          return;
        }
        if (!conn) throw new Refusal("protocol", "the first message must be Hello");
        this.dispatch(conn.key, event);
      },
      closed: () => {
        if (conn) this.gone(conn);
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

  private gone(conn: AgentConnection): void {
    if (this.connections.get(conn.key) === conn) {
      this.forget(conn);
      const reason = conn.toldToDrain ? "drained" : this.options.state() === "running" && !this.options.runEnded() ? "disconnected" : "run ended";
      this.options.publishEvent({ type: "agent_left", at: now(), agentId: conn.agentId, reason });
    }
    this.options.scheduler.detach(conn.key);
    conn.end();
  }

  private forget(conn: AgentConnection): void {
    this.connections.delete(conn.key);
    this.options.scheduler.detach(conn.key);
    this.options.onDetached(conn.key);
  }
}

function now(): string {
  return new Date().toISOString();
}
