// `agent --vllm-cmd "vllm serve MODEL --port 8000 ..."`: the agent runs its engine as a child
// process. It starts the command (through the shell, in its own process group), relays each of
// its output lines to the agent's log under the prefix "vllm", polls /health until the engine
// answers, restarts the command with exponential backoff whenever it exits, and stops it (SIGTERM
// to the group, SIGKILL after a grace period) on drain. While the child is down or starting, the
// engine probe of the attach loop sees /health fail, so the agent reports not-ready to the
// coordinator and is sent nothing. `restartWith` swaps the command (a sweep's next model): the
// child is stopped and the new command started, with the agent not-ready in between.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { Logger } from "../common/log.js";
import { engineAuthorization } from "./engine-auth.js";
import { reconnectDelayMs, type BackoffOptions } from "./reconnect-backoff.js";

export interface VllmSupervisorOptions {
  /** Shell command line that serves the engine. */
  command: string;
  /** The engine's health URL, e.g. http://127.0.0.1:8000/health. */
  healthUrl: string;
  logger: Logger;
  /** Restart backoff. Default 1 s doubling to 60 s. */
  backoff?: BackoffOptions;
  /** How often /health is polled while starting. Default 500 ms. */
  healthIntervalMs?: number;
  /** SIGTERM -> SIGKILL grace on stop. Default 15 s. */
  stopGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Variables set for the child on top of env (a template's UDM_ENGINE_MODEL). */
  extraEnv?: Record<string, string>;
  /** Variables set for the child that the log names without their value (the engine's VLLM_API_KEY). */
  secretEnv?: Record<string, string>;
}

export type SupervisorState = "starting" | "ready" | "down" | "stopped";

export class VllmSupervisor {
  private child: ChildProcess | undefined;
  private stateValue: SupervisorState = "down";
  private stopping = false;
  /** Set while restartWith stops the old child: its exit is not a crash to back off from. */
  private switching = false;
  private command: string | undefined;
  private extraEnv: Record<string, string>;
  private generation = 0;
  private failures = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(state: SupervisorState) => void>();
  private readonly log: Logger;
  /** Child processes started so far (1 + restarts). */
  starts = 0;
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly options: VllmSupervisorOptions) {
    this.log = options.logger.child("vllm");
    this.command = options.command;
    this.extraEnv = options.extraEnv ?? {};
  }

  /** The command line the child runs (or will run); undefined once halted by restartWith(undefined). */
  get currentCommand(): string | undefined {
    return this.command;
  }

  get state(): SupervisorState {
    return this.stateValue;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  onChange(listener: (state: SupervisorState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the engine answers /health (or rejects when stopped first). */
  waitReady(signal?: AbortSignal): Promise<void> {
    if (this.stateValue === "ready") return Promise.resolve();
    return new Promise((resolve, reject) => {
      const off = this.onChange((s) => {
        if (s === "ready") {
          off();
          resolve();
        } else if (s === "stopped") {
          off();
          reject(new Error("vLLM supervisor stopped"));
        }
      });
      signal?.addEventListener("abort", () => {
        off();
        reject(signal.reason);
      }, { once: true });
    });
  }

  start(): void {
    if (this.child || this.stopping || this.command === undefined) return;
    this.spawnChild();
  }

  /** Stops the child (if any) and starts `command` in its place (with `extraEnv`); undefined: starts nothing. */
  async restartWith(command: string | undefined, extraEnv: Record<string, string> = {}): Promise<void> {
    if (this.stopping) return;
    this.command = command;
    this.extraEnv = extraEnv;
    const generation = ++this.generation;
    clearTimeout(this.restartTimer);
    clearTimeout(this.healthTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      this.switching = true;
      this.log.info("stopping the engine to start another command");
      this.setState("down");
      this.kill(child, "SIGTERM");
      const grace = setTimeout(() => this.kill(child, "SIGKILL"), this.options.stopGraceMs ?? 15_000);
      await this.exited;
      clearTimeout(grace);
      this.switching = false;
    }
    if (this.stopping || generation !== this.generation) return; // a later restartWith took over
    this.failures = 0;
    if (command !== undefined) this.spawnChild();
  }

  /** Stops the child and does not restart it. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearTimeout(this.healthTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      this.kill(child, "SIGTERM");
      const grace = setTimeout(() => this.kill(child, "SIGKILL"), this.options.stopGraceMs ?? 15_000);
      await this.exited;
      clearTimeout(grace);
    }
    this.setState("stopped");
  }

  private spawnChild(): void {
    this.starts++;
    this.setState("starting");
    const secretEnv = this.options.secretEnv ?? {};
    const shownEnv = [...Object.entries(this.extraEnv), ...Object.keys(secretEnv).map((k) => [k, "***"])];
    this.log.info(`starting (${this.starts === 1 ? "first start" : `restart ${this.starts - 1}`}): ${shownEnv.map(([k, v]) => `${k}=${v} `).join("")}${this.command}`);
    const child = spawn(this.command ?? "", { shell: true, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...(this.options.env ?? process.env), ...this.extraEnv, ...secretEnv } });
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => this.log.info(line));
    }
    this.exited = new Promise((resolve) => {
      // "close", not "exit": the engine's last log lines are read before it counts as gone.
      child.once("close", (code, signal) => {
        if (this.child === child) this.child = undefined;
        clearTimeout(this.healthTimer);
        resolve();
        if (this.stopping || this.switching) return;
        this.failures++;
        const delay = reconnectDelayMs(this.failures - 1, this.options.backoff ?? { initialMs: 1_000, maxMs: 60_000 });
        this.log.warn(`exited (${signal ?? `code ${code}`}); restarting in ${delay} ms`);
        this.setState("down");
        this.restartTimer = setTimeout(() => {
          if (this.command !== undefined) this.spawnChild();
        }, delay);
      });
    });
    child.once("error", (err) => this.log.error(`cannot start: ${err.message}`));
    this.pollHealth(child);
  }

  private pollHealth(child: ChildProcess): void {
    const tick = async () => {
      if (this.child !== child || this.stopping) return;
      let ok = false;
      try {
        const authorization = engineAuthorization(this.options.healthUrl);
        const res = await fetch(this.options.healthUrl, { signal: AbortSignal.timeout(2_000), ...(authorization ? { headers: { authorization } } : {}) });
        ok = res.ok;
        await res.body?.cancel();
      } catch {
        ok = false;
      }
      if (this.child !== child || this.stopping) return;
      if (ok) {
        if (this.stateValue !== "ready") this.log.info("ready (/health answers)");
        this.failures = 0; // a child that came up resets the backoff
        this.setState("ready");
        // Keep watching: a hung engine that stops answering /health is down too.
        this.healthTimer = setTimeout(tick, 5 * (this.options.healthIntervalMs ?? 500));
        return;
      }
      if (this.stateValue === "ready") {
        this.log.warn("/health stopped answering");
        this.setState("starting");
      }
      this.healthTimer = setTimeout(tick, this.options.healthIntervalMs ?? 500);
    };
    this.healthTimer = setTimeout(tick, this.options.healthIntervalMs ?? 500);
  }

  private kill(child: ChildProcess, signal: NodeJS.Signals): void {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal); // the whole group: shell and engine
    } catch {
      child.kill(signal);
    }
  }

  private setState(state: SupervisorState): void {
    if (this.stateValue === state) return;
    this.stateValue = state;
    for (const l of [...this.listeners]) l(state);
  }
}
