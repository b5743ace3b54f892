// udm-orch agent: attaches to a coordinator and answers its work units through a local engine.
// SIGTERM/SIGINT drain (finish and send what is in hand); a second SIGINT stops at once.
// Exit 0 after a drain (the coordinator's "run complete", or a signal), 1 when the coordinator
// refuses the credentials or the agent cannot go on.
import type { Command } from "commander";
import { UsageError, UdmError, EXIT } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { startAgent, type AgentOutcome, AdaptiveConcurrency, readEngineLoad, VllmSupervisor, MethodSwitch, registerAgentMetrics, EngineTimeouts, channelCredentials, DEFAULT_RETRY_POLICY } from "../agent/index.js";
import { opt, intArg } from "./options.js";
import { createProcessRegistry, AGENT_METRICS_EXAMPLE, parseMetricsListen, startMetricsServer, type MetricsServer } from "../common/metrics/index.js";
import { METHODS, engineUrl, methodFactory, parseSeeds } from "./engine-methods.js";

interface AgentFlags {
  coordinator: string;
  engine: string;
  method: string;
  model?: string;
  labelReadApi: string;
  token?: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  capacity?: string;
  concurrency?: string;
  agentId?: string;
  heartbeatMs?: string;
  seeds?: string;
  maxConcurrency?: string;
  vllmCmd?: string;
  metrics: string;
  requestTimeoutMs?: string;
  retries?: string;
  engineReadyTimeoutMs?: string;
  maxMessageMb?: string;
  drainTimeoutMs?: string;
}

/** How long a signalled agent finishes its units before it stops anyway. */
const DEFAULT_SIGNAL_DRAIN_MS = 5_000;

function coordinatorAddress(value: string): string {
  if (!/^(\[[0-9a-fA-F:]+\]|[^:\s/]+):\d{1,5}$/.test(value)) throw new UsageError(`--coordinator must be HOST:PORT, got ${JSON.stringify(value)}`);
  return value;
}

function describe(outcome: AgentOutcome): string {
  switch (outcome.kind) {
    case "drained":
      return `drained by the ${outcome.by === "coordinator" ? "coordinator" : "agent"} (${outcome.reason})`;
    case "stopped":
      return "stopped";
    case "failed":
      return `failed: ${outcome.error.message}`;
  }
}

const MODEL_PLACEHOLDER = "{model}";
const ANY_METHOD = "any";

/** The template with {model} replaced by the model name, quoted for the shell. */
export function fillModel(template: string, model: string): string {
  return template.split(MODEL_PLACEHOLDER).join(`'${model.replace(/'/g, `'\\''`)}'`);
}

export function register(program: Command): void {
  program
    .command("agent")
    .description("attach to a coordinator and answer its work units through a local engine (vLLM or sim-engine)")
    .addOption(opt("--coordinator <host:port>", "coordinator address").makeOptionMandatory())
    .addOption(opt("--engine <url>", "engine base URL, e.g. http://127.0.0.1:8000").makeOptionMandatory())
    .addOption(opt("--method <name>", `engine method (${Object.keys(METHODS).join(", ")}), or "any": the one each run names (a sweep)`, "systemone"))
    .addOption(opt("--model <name>", "model to ask the engine for (default: the first it serves)"))
    .addOption(opt("--label-read-api <api>", "label-read prompts: completions (token ids) or chat (the server's chat template)", "completions"))
    .addOption(opt("--token <token>", "bearer token the coordinator expects"))
    .addOption(opt("--tls-ca <file>", "CA certificate (PEM) of the coordinator; enables TLS"))
    .addOption(opt("--tls-cert <file>", "client certificate (PEM) for mutual TLS"))
    .addOption(opt("--tls-key <file>", "client key (PEM) for mutual TLS"))
    .addOption(opt("--capacity <n>", "units to hold at once (default: the method's engine capacity, 8 for systemone)"))
    .addOption(opt("--concurrency <n>", "records in flight to the engine across units (default: 2 x capacity)"))
    .addOption(opt("--agent-id <id>", "agent id (default: hostname-pid-random)"))
    .addOption(opt("--heartbeat-ms <ms>", "heartbeat interval (default: the coordinator's)"))
    .addOption(opt("--seeds <list>", "label-permutation seeds averaged per question, e.g. 0,1,2 (default: the run's, else one read)"))
    .addOption(opt("--max-concurrency <n>", "upper bound of the adaptive (AIMD) limit on requests in flight to the engine (default 256)"))
    .addOption(
      opt(
        "--vllm-cmd <command>",
        'start the engine as a child process, e.g. "vllm serve MODEL --port 8000"; restarted when it exits, stopped on drain. ' +
          "With {model} in it, a template: the engine is (re)started with the model each run names (a sweep), the agent not ready meanwhile",
      ),
    )
    .addOption(opt("--request-timeout-ms <ms>", `time one engine request may take before it is retried (default ${DEFAULT_RETRY_POLICY.timeoutMs})`))
    .addOption(opt("--retries <n>", `retries of a failed engine request before the question is reported as an error (default ${DEFAULT_RETRY_POLICY.retries})`))
    .addOption(opt("--engine-ready-timeout-ms <ms>", "report an engine that is not ready after this long (the agent keeps trying; default 60000)"))
    .addOption(opt("--max-message-mb <mb>", "largest work unit accepted from the coordinator, in MiB (default 256)"))
    .addOption(opt("--drain-timeout-ms <ms>", `after SIGTERM, how long to finish the units in hand before stopping anyway; what is unfinished goes back to the coordinator (default ${DEFAULT_SIGNAL_DRAIN_MS})`))
    .addOption(opt("--metrics <host:port>", `serve Prometheus metrics on /metrics (off by default; deployments pass e.g. ${AGENT_METRICS_EXAMPLE})`, "off"))
    .action(async (flags: AgentFlags) => {
      const metricsListen = parseMetricsListen(flags.metrics);
      const coordinator = coordinatorAddress(flags.coordinator);
      const engine = engineUrl(flags.engine);
      const capacity = intArg("capacity", flags.capacity, 1);
      const concurrency = intArg("concurrency", flags.concurrency, 1);
      const heartbeatMs = intArg("heartbeat-ms", flags.heartbeatMs, 10);
      const anyMethod = flags.method === ANY_METHOD;
      if (!anyMethod) methodFactory(flags.method);
      if (flags.labelReadApi !== "completions" && flags.labelReadApi !== "chat") {
        throw new UsageError(`--label-read-api must be completions or chat, got ${JSON.stringify(flags.labelReadApi)}`);
      }
      if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) throw new UsageError("--tls-cert and --tls-key go together");
      const seeds = parseSeeds(flags.seeds);
      const maxConcurrency = intArg("max-concurrency", flags.maxConcurrency, 1);
      const tls = flags.tlsCa || flags.tlsCert ? { ca: flags.tlsCa, cert: flags.tlsCert, key: flags.tlsKey } : undefined;
      channelCredentials(tls); // unreadable or garbage PEM files: exit 2 now, not a reattach loop
      const timeoutMs = intArg("request-timeout-ms", flags.requestTimeoutMs, 1) ?? DEFAULT_RETRY_POLICY.timeoutMs;
      const retries = intArg("retries", flags.retries, 0) ?? DEFAULT_RETRY_POLICY.retries;
      const engineReadyWarnMs = intArg("engine-ready-timeout-ms", flags.engineReadyTimeoutMs, 1);
      const maxMessageMb = intArg("max-message-mb", flags.maxMessageMb, 4, 2047);
      const drainTimeoutMs = intArg("drain-timeout-ms", flags.drainTimeoutMs, 0) ?? DEFAULT_SIGNAL_DRAIN_MS;

      const logger = createLogger("udm-orch");
      // A template names no model until --model or the run's Welcome does; then the engine is started with it.
      const template = flags.vllmCmd?.includes(MODEL_PLACEHOLDER) ? flags.vllmCmd : undefined;
      let servedModel = template ? flags.model : undefined;
      const supervisor = flags.vllmCmd
        ? new VllmSupervisor({ command: template ? fillModel(template, servedModel ?? "") : flags.vllmCmd, healthUrl: `${engine}/health`, logger })
        : undefined;
      if (!template || servedModel) supervisor?.start();
      const switchModel = (model: string) => {
        if (!template || !supervisor || !model || model === servedModel) return;
        logger.info("the run names another model: restarting the engine with it", { from: servedModel ?? "(none)", to: model });
        servedModel = model;
        void supervisor.restartWith(fillModel(template, model));
      };
      const limiter = new AdaptiveConcurrency({
        ...(maxConcurrency !== undefined ? { max: maxConcurrency, initial: Math.min(8, maxConcurrency) } : {}),
        readWaiting: async (signal) => (await readEngineLoad(engine, signal)).waiting,
      });
      const timeouts = new EngineTimeouts(engine, timeoutMs, logger);
      const retry = { timeoutMs, retries, onTimeout: () => timeouts.record() };
      // With a template the engine serves the run's model: the method asks for whatever it serves.
      const setup = { baseUrl: engine, model: template ? undefined : flags.model, capacity, api: flags.labelReadApi as "completions" | "chat", limiter, seeds, retry, logger };
      const method = anyMethod
        ? new MethodSwitch(new Map(Object.entries(METHODS).map(([name, make]) => [name, make(setup)])), "systemone")
        : methodFactory(flags.method)(setup);
      const handle = startAgent({
        coordinator,
        method,
        engineUrl: engine,
        engineHealthUrl: `${engine}/health`,
        engineLoad: (signal) => readEngineLoad(engine, signal),
        // A sweep's runs differ in method (--method any) and model (a --vllm-cmd template).
        onRunParams: (run) => {
          if (method instanceof MethodSwitch && run.method && !method.use(run.method)) logger.warn("the run names an engine method this build lacks", { method: run.method });
          method.applyRunParams?.({ seeds: run.seeds });
          switchModel(run.model);
        },
        ...(flags.agentId ? { agentId: flags.agentId } : {}),
        ...(flags.token ? { token: flags.token } : {}),
        ...(tls ? { tls } : {}),
        ...(capacity !== undefined ? { capacity } : {}),
        ...(concurrency !== undefined ? { concurrency } : {}),
        ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
        ...(engineReadyWarnMs !== undefined ? { engineReadyWarnMs } : {}),
        ...(maxMessageMb !== undefined ? { maxMessageBytes: maxMessageMb * 1024 * 1024 } : {}),
        logger,
      });

      let metricsServer: MetricsServer | undefined;
      if (metricsListen) {
        const registry = createProcessRegistry("agent");
        registerAgentMetrics(registry, {
          agent: handle.agentId,
          method: flags.method,
          engineUrl: engine,
          stats: () => handle.stats(),
          limiter,
          ...(supervisor ? { engineStarts: () => supervisor.starts } : {}),
        });
        try {
          metricsServer = await startMetricsServer({ listen: metricsListen, metrics: () => registry.metrics(), log: logger });
        } catch (err) {
          handle.stop();
          await handle.done;
          await supervisor?.stop();
          throw err;
        }
        process.stdout.write(`agent ${handle.agentId}: metrics on ${metricsServer.url}/metrics\n`);
      }

      let signals = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        signals++;
        if (signals === 1 || signal === "SIGTERM") {
          if (signals > 1) return;
          logger.info(`${signal}: draining (finishing the units in hand, at most ${drainTimeoutMs} ms); SIGINT again to stop now`);
          void handle.drain();
          // An engine that hangs must not hold the agent for minutes (request timeout x retries).
          setTimeout(() => {
            logger.warn(`drain not finished within ${drainTimeoutMs} ms (--drain-timeout-ms): stopping; units in hand go back to the coordinator`);
            handle.stop();
          }, drainTimeoutMs).unref();
        } else {
          logger.warn(`${signal}: stopping now; units in hand go back to the coordinator`);
          handle.stop();
        }
      };
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
      let outcome: AgentOutcome;
      try {
        outcome = await handle.done;
      } finally {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
        await supervisor?.stop();
        await metricsServer?.close();
      }
      const s = handle.stats();
      process.stdout.write(
        `agent ${handle.agentId}: ${describe(outcome)}; ${s.unitsDone} units, ${s.resultsSent} results sent, ${s.recordFailures} records failed, ${s.disconnects} reconnects, ${timeouts.total} engine timeouts` +
          `${s.unknownLabels > 0 ? `, ${s.unknownLabels} unknown labels from the engine dropped` : ""}\n`,
      );
      if (outcome.kind === "failed") throw outcome.error;
      if (outcome.kind === "stopped") throw new UdmError("agent stopped before draining; units in hand were returned to the coordinator");
      process.exitCode = EXIT.ok;
    });
}
