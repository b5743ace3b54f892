// A distributed run as real processes (nats-server with JetStream, a coordinator, N simulated
// engines, N agents and the streaming scorer), each on a port fixed at start so that any of them
// can be SIGKILLed and started again in its place; plus the seeded kill schedule that does it.
// Shared by the chaos test (test/e2e/chaos.integration.test.ts) and bench/chaos-bench.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./bench-args.js";
import { acceptsNatsClients } from "./nats-probe.js";
import { seededRandom } from "../sim/index.js";

const HERE = dirname(fileURLToPath(import.meta.url));
/** The built CLI: beside this file when it runs from dist/, else the repository's dist/ (a test importing the source). */
const MAIN = existsSync(join(HERE, "..", "cli", "main.js")) ? join(HERE, "..", "cli", "main.js") : join(HERE, "..", "dist", "cli", "main.js");

export type Victim = "coordinator" | "agent" | "engine" | "scorer" | "nats";
export const VICTIMS: readonly Victim[] = ["coordinator", "agent", "engine", "scorer", "nats"];

export interface Kill {
  victim: Victim;
  /** Which agent or engine (0 for the others). */
  index: number;
  /** Pause before this kill, after the previous victim is back. */
  afterMs: number;
}

/**
 * `kills` kills in a seeded order: every kind of process equally often (a remainder goes to the
 * first kinds), shuffled; a random agent or engine; a random pause in [minGapMs, maxGapMs).
 */
export function killSchedule(seed: number, kills: number, processes: number, minGapMs: number, maxGapMs: number): Kill[] {
  const rnd = seededRandom(seed);
  const victims: Victim[] = Array.from({ length: kills }, (_, i) => VICTIMS[i % VICTIMS.length]!);
  for (let i = victims.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [victims[i], victims[j]] = [victims[j]!, victims[i]!];
  }
  return victims.map((victim) => ({
    victim,
    index: victim === "agent" || victim === "engine" ? Math.floor(rnd() * processes) : 0,
    afterMs: Math.round(minGapMs + rnd() * (maxGapMs - minGapMs)),
  }));
}

/** One child process, its output kept (the last 256 KiB) for waiting on lines and for reports. */
export class Proc {
  readonly child: ChildProcess;
  private out = "";
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly name: string, command: string, args: readonly string[], env: Record<string, string> = {}) {
    this.child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, UDM_NO_PROGRESS: "1", ...env } });
    const onData = (b: Buffer) => {
      this.out += b.toString("utf8");
      if (this.out.length > 512 * 1024) this.out = this.out.slice(-256 * 1024);
      for (const w of this.waiters) w();
    };
    this.child.stdout!.on("data", onData);
    this.child.stderr!.on("data", onData);
    this.exited = new Promise((res) =>
      this.child.once("exit", (code, signal) => {
        res({ code, signal });
        for (const w of this.waiters) w();
      }),
    );
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  output(): string {
    return this.out;
  }

  /** The first match of `re` in the output; rejects when the process exits first or after timeoutMs. */
  waitFor(re: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return new Promise((res, rej) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        rej(new Error(`${this.name}: timed out after ${timeoutMs} ms waiting for ${re}:\n${this.out.slice(-3000)}`));
      }, timeoutMs);
      const check = () => {
        const m = this.out.match(re);
        if (m || !this.alive) {
          clearTimeout(timer);
          this.waiters.delete(check);
          if (m) res(m);
          else rej(new Error(`${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before printing ${re}:\n${this.out.slice(-3000)}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (this.alive) this.child.kill(signal);
    await this.exited;
  }
}

export interface ChaosClusterOptions {
  suiteDir: string;
  /** The coordinator's --out (results). */
  resultsDir: string;
  /** The scorer's --out (metrics.json, journal). */
  scorerDir: string;
  /** nats-server's JetStream store. */
  natsStoreDir: string;
  agents: number;
  /** --tokens-per-s of each simulated engine. */
  tokensPerS: number;
  leaseMs?: number;
  heartbeatMs?: number;
  /** Each agent's --retries of a failed engine request (an engine being restarted refuses connections). */
  retries?: number;
  /** Lines of every process (start, kill, restart), for the report. */
  log?: (line: string) => void;
}

export interface EngineCounters {
  requests: number;
  promptTokens: number;
}

/**
 * The processes of one run. start() brings everything up; kill() SIGKILLs one and starts it again
 * in its place (same port, same --out); finish() waits for the run and the scorer to end.
 */
export class ChaosCluster {
  private nats!: Proc;
  private coordinator!: Proc;
  private readonly engines: Proc[] = [];
  private readonly agents: Proc[] = [];
  private scorer!: Proc;
  private natsPort = 0;
  private coordinatorPort = 0;
  private readonly enginePorts: number[] = [];
  private readonly all: Proc[] = [];
  /** Engine work over every engine process so far (read just before each engine is killed, and at the end). */
  private readonly engineTotals: EngineCounters = { requests: 0, promptTokens: 0 };
  runId = "";
  /** Coordinator starts (the first included). */
  coordinatorStarts = 0;

  constructor(private readonly o: ChaosClusterOptions) {}

  private say(line: string): void {
    this.o.log?.(line);
  }

  private spawn(name: string, command: string, args: readonly string[]): Proc {
    const p = new Proc(name, command, args);
    this.all.push(p);
    return p;
  }

  private cli(name: string, args: readonly string[]): Proc {
    return this.spawn(name, process.execPath, [MAIN, ...args]);
  }

  get natsUrl(): string {
    return `nats://127.0.0.1:${this.natsPort}`;
  }

  /** True once the coordinator has ended by itself with the run complete (exit 0). */
  get runEnded(): boolean {
    return !this.coordinator.alive && this.coordinator.child.exitCode === 0;
  }

  async start(): Promise<void> {
    mkdirSync(this.o.natsStoreDir, { recursive: true });
    [this.natsPort, this.coordinatorPort] = [await freePort(), await freePort()];
    for (let i = 0; i < this.o.agents; i++) this.enginePorts.push(await freePort());
    await this.startNats();
    await Promise.all(this.enginePorts.map((_, i) => this.startEngine(i)));
    await this.startCoordinator();
    for (let i = 0; i < this.o.agents; i++) this.startAgent(i);
    await this.startScorer();
  }

  private async startNats(): Promise<void> {
    this.nats = this.spawn("nats-server", "nats-server", ["-a", "127.0.0.1", "-p", String(this.natsPort), "-js", "-sd", this.o.natsStoreDir]);
    await this.nats.waitFor(/Server is ready/, 60_000);
    // "Server is ready" comes after JetStream recovery; the INFO line confirms the listener.
    for (let i = 0; i < 100 && !(await acceptsNatsClients(this.natsPort)); i++) await delay(100);
  }

  private async startEngine(i: number): Promise<void> {
    const p = this.cli(`engine ${i}`, ["sim-engine", "--port", String(this.enginePorts[i]), "--tokens-per-s", String(this.o.tokensPerS), "--seed", String(i)]);
    this.engines[i] = p;
    await p.waitFor(/^http:\/\/127\.0\.0\.1:\d+$/m);
  }

  private async startCoordinator(): Promise<void> {
    this.coordinatorStarts++;
    const p = this.cli("coordinator", [
      "coordinator",
      "--suite", this.o.suiteDir,
      "--out", this.o.resultsDir,
      "--listen", `127.0.0.1:${this.coordinatorPort}`,
      "--token", "chaos",
      "--nats", this.natsUrl,
      "--lease-ms", String(this.o.leaseMs ?? 3000),
      "--heartbeat-ms", String(this.o.heartbeatMs ?? 500),
      "--metrics", "off",
    ]);
    this.coordinator = p;
    // A coordinator started after the run ended may publish what is left and exit before serving long.
    const m = await p.waitFor(/listening on 127\.0\.0\.1:\d+ run ([0-9a-f-]+)/, 120_000);
    this.runId = m[1]!;
  }

  private startAgent(i: number): void {
    this.agents[i] = this.cli(`agent ${i}`, [
      "agent",
      "--coordinator", `127.0.0.1:${this.coordinatorPort}`,
      "--engine", `http://127.0.0.1:${this.enginePorts[i]}`,
      "--token", "chaos",
      "--retries", String(this.o.retries ?? 10),
    ]);
  }

  private async startScorer(): Promise<void> {
    this.scorer = this.cli("scorer", ["scorer", "--suite", this.o.suiteDir, "--nats", this.natsUrl, "--out", this.o.scorerDir, "--run", this.runId, "--ack-wait-ms", "1000", "--metrics", "off"]);
    await this.scorer.waitFor(/scoring into/);
  }

  /**
   * SIGKILLs the victim, waits for it to be gone, and starts it again in its place without waiting
   * for it to be ready: the next kill may find it still starting (a coordinator reading the suite,
   * nats-server recovering its store), which is part of the chaos, and a loaded machine's slow
   * starts do not stretch the schedule.
   */
  async kill(victim: Victim, index: number): Promise<void> {
    switch (victim) {
      case "nats":
        await this.nats.kill();
        this.background(this.startNats());
        break;
      case "coordinator":
        await this.coordinator.kill();
        this.background(this.startCoordinator());
        break;
      case "engine": {
        const c = await engineCounters(this.enginePorts[index]!);
        await this.engines[index]!.kill();
        this.add(c);
        this.background(this.startEngine(index));
        break;
      }
      case "agent":
        await this.agents[index]!.kill();
        this.startAgent(index);
        break;
      case "scorer":
        await this.scorer.kill();
        this.background(this.startScorer());
        break;
    }
    this.say(`${new Date().toISOString()} killed ${victim}${victim === "agent" || victim === "engine" ? ` ${index}` : ""} and started it again`);
  }

  /** A restart's readiness is not awaited; a process killed before it was ready is not an error. */
  private background(p: Promise<void>): void {
    p.catch((err: unknown) => this.say(`(a restarted process ended before it was ready: ${(err as Error).message.split("\n")[0]})`));
  }

  private add(c: EngineCounters | undefined): void {
    if (!c) return;
    this.engineTotals.requests += c.requests;
    this.engineTotals.promptTokens += c.promptTokens;
  }

  /**
   * Waits for the coordinator to end the run and the scorer to finish. A coordinator that ended
   * with results not yet on the bus (NATS was down at its end) is started once more, as the README
   * says: the next start publishes them.
   */
  async finish(timeoutMs: number): Promise<{ coordinator: number | null; scorer: number | null; extraCoordinatorStarts: number }> {
    const deadline = Date.now() + timeoutMs;
    let extra = 0;
    for (;;) {
      const end = await withTimeout(this.coordinator.exited, deadline - Date.now());
      if (!end) throw new Error(`the run did not end in ${timeoutMs} ms:\n${this.coordinator.output().slice(-3000)}`);
      if (end.code !== 0) throw new Error(`coordinator exited with ${end.code ?? end.signal}:\n${this.coordinator.output().slice(-3000)}`);
      const scorerEnd = await withTimeout(this.scorer.exited, /results not on the bus/.test(this.coordinator.output()) ? 5000 : 60_000);
      if (scorerEnd) {
        for (const e of this.engines) this.add(await engineCounters(this.enginePorts[this.engines.indexOf(e)]!));
        return { coordinator: end.code, scorer: scorerEnd.code, extraCoordinatorStarts: extra };
      }
      if (extra >= 3) throw new Error(`the scorer did not finish:\n${this.scorer.output().slice(-3000)}`);
      extra++;
      this.say("the scorer is still waiting: starting the coordinator again to publish what NATS missed");
      await this.startCoordinator();
    }
  }

  /** Requests and prompt tokens the engines served, over every engine process. */
  get engineWork(): EngineCounters {
    return { ...this.engineTotals };
  }

  output(name: "coordinator" | "scorer"): string {
    return name === "coordinator" ? this.coordinator.output() : this.scorer.output();
  }

  /** SIGKILLs whatever is still running (agents still reconnecting, engines, nats-server). */
  async stop(): Promise<void> {
    await Promise.all(this.all.map((p) => p.kill("SIGKILL")));
  }
}

/** The engine's vLLM counters from its /metrics (undefined when it does not answer). */
export async function engineCounters(port: number): Promise<EngineCounters | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
    const sum = (name: string) =>
      text
        .split("\n")
        .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
    return { requests: sum("vllm:request_success_total"), promptTokens: sum("vllm:prompt_tokens_total") };
  } catch {
    return undefined;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const r = await Promise.race([p, new Promise<undefined>((res) => (timer = setTimeout(() => res(undefined), Math.max(0, ms))))]);
  clearTimeout(timer);
  return r;
}

/**
 * Runs the schedule against a started cluster: each kill after its pause, until the schedule is
 * done or the run has ended by itself. Returns the kills done.
 */
export async function runSchedule(cluster: ChaosCluster, schedule: readonly Kill[]): Promise<Kill[]> {
  const done: Kill[] = [];
  for (const k of schedule) {
    await delay(k.afterMs);
    if (cluster.runEnded) break;
    await cluster.kill(k.victim, k.index);
    done.push(k);
  }
  return done;
}
