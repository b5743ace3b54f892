// An agent process as one object: create() builds what `udm-orch agent` runs (the engine method
// by name, its adaptive request limit, the engine child of --vllm-cmd, the attach loop, the
// metrics server), run() resolves with how it ended once all of that is released, and shutdown()
// drains it within its drain timeout. Signals are the caller's (cli/agent.ts).
import { createProcessRegistry, startMetricsServer, type MetricsServer } from "../common/metrics/index.js";
import { AdaptiveConcurrency, latencyBudgetOf } from "./adaptive-concurrency.js";
import { registerAgentMetrics } from "./agent-metrics.js";
import { withAgentDefaults, AGENT_DEFAULTS, MIB, type AgentOptions, type ResolvedAgentOptions } from "./agent-options.js";
import type { AgentStats } from "./agent-stats.js";
import { startAgent, type AgentHandle, type AgentOutcome } from "./attach-loop.js";
import { useEngineApiKey } from "./engine-auth.js";
import { readEngineLoad } from "./engine-load.js";
import { EngineProcess } from "./engine-process.js";
import { EngineTimeouts } from "./engine-timeouts.js";
import { ANY_METHOD, METHODS, methodFactory, type MethodSetup } from "./method-table.js";
import { MethodSwitch } from "./method-switch.js";
import { channelCredentials } from "./transport/coordinator-channel.js";

export class Agent {
  private drainTimer: NodeJS.Timeout | undefined;
  private ended: Promise<AgentOutcome> | undefined;

  private constructor(
    private readonly o: ResolvedAgentOptions,
    private readonly handle: AgentHandle,
    private readonly timeouts: EngineTimeouts,
    private readonly engine: EngineProcess | undefined,
    private readonly metricsServer: MetricsServer | undefined,
    private readonly releaseApiKey: () => void,
  ) {}

  /** Starts the engine (--vllm-cmd), attaches to the coordinator and serves metrics; a UsageError for bad TLS files or method. */
  static async create(options: AgentOptions): Promise<Agent> {
    const o = withAgentDefaults(options);
    const logger = o.logger;
    const tls = o.tlsCa || o.tlsCert ? { ca: o.tlsCa, cert: o.tlsCert, key: o.tlsKey } : undefined;
    channelCredentials(tls); // unreadable or garbage PEM files: a usage error now, not a reattach loop
    const anyMethod = o.method === ANY_METHOD;
    if (!anyMethod) methodFactory(o.method);

    const releaseApiKey = o.engineApiKey ? useEngineApiKey(o.engineUrl, o.engineApiKey) : () => {};
    let engine: EngineProcess | undefined;
    try {
      engine = o.vllmCmd ? new EngineProcess(o.vllmCmd, o.model, o.engineUrl, logger, o.engineApiKey) : undefined;
    } catch (err) {
      releaseApiKey();
      throw err;
    }
    const limiter = new AdaptiveConcurrency({
      max: o.maxConcurrency, // the initial limit is clamped to it
      // No request should run past its timeout merely for being one of too many (adaptive-concurrency.ts).
      latencyBudgetMs: latencyBudgetOf(o.requestTimeoutMs),
      readWaiting: async (signal) => (await readEngineLoad(o.engineUrl, signal)).waiting,
    });
    const timeouts = new EngineTimeouts(o.engineUrl, o.requestTimeoutMs, logger);
    const retry = { timeoutMs: o.requestTimeoutMs, retries: o.retries, onTimeout: () => timeouts.record() };
    // An engine started with each run's model serves that model: the method asks for whatever it serves.
    const setup: MethodSetup = { baseUrl: o.engineUrl, model: engine?.followsRunModel ? undefined : o.model, capacity: o.capacity, api: o.labelReadApi, limiter, seeds: o.seeds, retry, logger };
    const method = anyMethod
      ? new MethodSwitch(new Map(Object.entries(METHODS).map(([name, make]) => [name, make(setup)])), AGENT_DEFAULTS.method)
      : methodFactory(o.method)(setup);
    const handle = startAgent({
      coordinator: o.coordinator,
      method,
      engineUrl: o.engineUrl,
      engineHealthUrl: `${o.engineUrl}/health`,
      engineLoad: (signal) => readEngineLoad(o.engineUrl, signal),
      // A sweep's runs differ in method (--method any) and model (a --vllm-cmd template).
      onRunParams: (run) => {
        if (method instanceof MethodSwitch && run.method && !method.use(run.method)) logger.warn("the run names an engine method this build lacks", { method: run.method });
        method.applyRunParams?.({ seeds: run.seeds });
        engine?.useModel(run.model);
      },
      ...(o.agentId ? { agentId: o.agentId } : {}),
      ...(o.token ? { token: o.token } : {}),
      ...(tls ? { tls } : {}),
      ...(o.capacity !== undefined ? { capacity: o.capacity } : {}),
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      ...(o.heartbeatMs !== undefined ? { heartbeatMs: o.heartbeatMs } : {}),
      engineReadyWarnMs: o.engineReadyTimeoutMs,
      maxMessageBytes: o.maxMessageMb * MIB,
      logger,
    });

    let metricsServer: MetricsServer | undefined;
    if (o.metrics) {
      const registry = createProcessRegistry("agent");
      registerAgentMetrics(registry, {
        agent: handle.agentId,
        method: o.method,
        engineUrl: o.engineUrl,
        stats: () => handle.stats(),
        limiter,
        ...(engine ? { engineStarts: () => engine.starts } : {}),
      });
      try {
        metricsServer = await startMetricsServer({ listen: o.metrics, metrics: () => registry.metrics(), log: logger });
      } catch (err) {
        handle.stop();
        await handle.done;
        await engine?.stop();
        releaseApiKey();
        throw err;
      }
    }
    return new Agent(o, handle, timeouts, engine, metricsServer, releaseApiKey);
  }

  get agentId(): string {
    return this.handle.agentId;
  }

  /** Base URL of the metrics server (serving /metrics); undefined when metrics are off. */
  get metricsUrl(): string | undefined {
    return this.metricsServer?.url;
  }

  get drainTimeoutMs(): number {
    return this.o.drainTimeoutMs;
  }

  /** Resolves once the agent stopped attaching, before run() releases its engine child and metrics server. */
  get detached(): Promise<AgentOutcome> {
    return this.handle.done;
  }

  /** Resolves once the agent has stopped and its engine child and metrics server are stopped; never rejects. */
  run(): Promise<AgentOutcome> {
    this.ended ??= (async () => {
      try {
        return await this.handle.done;
      } finally {
        clearTimeout(this.drainTimer);
        await this.engine?.stop();
        await this.metricsServer?.close();
        this.releaseApiKey();
      }
    })();
    return this.ended;
  }

  /** Finish the units in hand and send them; after drainTimeoutMs, stop anyway. */
  shutdown(): void {
    if (this.drainTimer) return;
    void this.handle.drain();
    // An engine that hangs must not hold the agent for minutes (request timeout x retries).
    this.drainTimer = setTimeout(() => {
      this.o.logger.warn(`drain not finished within ${this.o.drainTimeoutMs} ms (--drain-timeout-ms): stopping; units in hand go back to the coordinator`);
      this.handle.stop();
    }, this.o.drainTimeoutMs).unref();
  }

  /** Stop now: the units in hand go back to the coordinator. */
  stop(): void {
    this.handle.stop();
  }

  stats(): AgentStats {
    return this.handle.stats();
  }

  /** Engine requests that ran past their timeout. */
  get engineTimeouts(): number {
    return this.timeouts.total;
  }
}
