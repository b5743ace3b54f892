// The `agents` block of `<out>/run.json`: which agents this session has seen, which are attached
// now and which of those are ready (their engine answers), kept up to date as they change (at most
// every FLUSH_MS) and once more at the end. run.json's resume checks (run-manifest.ts) compare
// suite, tracks and method only; this block is carried over as is and replaced by the next session.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunManifest } from "./run-manifest.js";

const FLUSH_MS = 500;

export interface RunAgentEntry {
  agent_id: string;
  engine_url: string;
  model: string;
  /** Attached now (one stream or more). */
  attached: boolean;
  /** Attached and ready: its engine answers and it is given work. */
  ready: boolean;
  first_seen: string;
  /** When attached or ready last changed. */
  last_change: string;
  /** Why it left and when, while it is not attached (cleared when it attaches again). */
  left_reason?: string;
  left_at?: string;
}

export interface RunAgentsBlock {
  /** Agents attached now, ready among them, and every agent this session has seen. */
  attached: number;
  ready: number;
  seen: number;
  updated_at: string;
  list: RunAgentEntry[];
}

/** An attached agent as the scheduler knows it now. */
export interface AttachedAgent {
  agentId: string;
  engineUrl: string;
  model: string;
  ready: boolean;
}

export class RunAgentsRecord {
  private readonly seen = new Map<string, RunAgentEntry>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly outDir: string,
    private readonly manifest: RunManifest,
    private readonly attachedNow: () => readonly AttachedAgent[],
    private readonly onError: (err: Error) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** An agent attached (seen even if it leaves before the next write). */
  joined(a: { agentId: string; engineUrl: string; model: string }): void {
    if (!this.seen.has(a.agentId)) {
      const at = this.now().toISOString();
      this.seen.set(a.agentId, { agent_id: a.agentId, engine_url: a.engineUrl, model: a.model, attached: false, ready: false, first_seen: at, last_change: at });
    }
    this.changed();
  }

  /** An agent left, and why (agent-sessions.ts): kept in its entry until it attaches again. */
  left(agentId: string, reason: string, at: string): void {
    const e = this.seen.get(agentId);
    if (e) {
      e.left_reason = reason;
      e.left_at = at;
    }
    this.changed();
  }

  /** Something changed (an agent joined, left, or its readiness changed): written soon. */
  changed(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write();
    }, FLUSH_MS);
    this.timer.unref();
  }

  /** Writes the block now (start and end of the session); no writes after close(). */
  write(): void {
    if (this.closed) return;
    const at = this.now().toISOString();
    const byId = new Map<string, AttachedAgent[]>();
    for (const a of this.attachedNow()) byId.set(a.agentId, [...(byId.get(a.agentId) ?? []), a]);
    for (const [id, conns] of byId) {
      if (this.seen.has(id)) continue;
      const c = conns[0]!;
      this.seen.set(id, { agent_id: id, engine_url: c.engineUrl, model: c.model, attached: false, ready: false, first_seen: at, last_change: at });
    }
    for (const e of this.seen.values()) {
      const conns = byId.get(e.agent_id) ?? [];
      const attached = conns.length > 0;
      const ready = conns.some((c) => c.ready);
      if (attached) {
        const c = conns[conns.length - 1]!;
        e.engine_url = c.engineUrl;
        e.model = c.model;
        delete e.left_reason;
        delete e.left_at;
      }
      if (attached !== e.attached || ready !== e.ready) {
        e.attached = attached;
        e.ready = ready;
        e.last_change = at;
      }
    }
    const list = [...this.seen.values()].sort((a, b) => (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0));
    const block: RunAgentsBlock = {
      attached: list.filter((e) => e.attached).length,
      ready: list.filter((e) => e.ready).length,
      seen: list.length,
      updated_at: at,
      list: list.map((e) => ({ ...e })),
    };
    const path = join(this.outDir, "run.json");
    try {
      writeFileSync(`${path}.tmp`, JSON.stringify({ ...this.manifest, agents: block }, null, 2) + "\n");
      renameSync(`${path}.tmp`, path);
    } catch (err) {
      // run.json's agents are a view for people; a failed write must not stop the run.
      this.onError(err as Error);
    }
  }

  /** The last write (agents as they are at the end); nothing after it. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.write();
    this.closed = true;
  }
}
