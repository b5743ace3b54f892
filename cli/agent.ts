// udm-orch agent: attaches to a coordinator and answers its work units through a local engine.
// SIGTERM/SIGINT drain (finish and send what is in hand); a second SIGINT stops at once.
// Exit 0 after a drain (the coordinator's "run complete", or a signal), 1 when the coordinator
// refuses the credentials or the agent cannot go on.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { UsageError, UdmError, EXIT } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { Agent, AGENT_DEFAULTS, ANY_METHOD, METHODS, methodFactory, type AgentOptions, type AgentOutcome } from "../agent/index.js";
import { intArg } from "./options.js";
import { AGENT_METRICS_EXAMPLE, parseMetricsListen } from "../common/metrics/index.js";
import { engineUrl, parseSeeds } from "./engine-methods.js";
import { flagGroup, flagOptions, optionsFromFlags } from "./flag-group.js";
import { onShutdownSignals } from "./signals.js";

function coordinatorAddress(value: string): string {
  if (!/^(\[[0-9a-fA-F:]+\]|[^:\s/]+):\d{1,5}$/.test(value)) throw new UsageError(`--coordinator must be HOST:PORT, got ${JSON.stringify(value)}`);
  return value;
}

function engineMethod(value: string): string {
  if (value !== ANY_METHOD) methodFactory(value);
  return value;
}

function labelReadApi(value: string): "completions" | "chat" {
  if (value !== "completions" && value !== "chat") throw new UsageError(`--label-read-api must be completions or chat, got ${JSON.stringify(value)}`);
  return value;
}

function apiKey(value: string, flag: string): string {
  if (value.trim() === "") throw new UsageError(`--${flag} must not be empty`);
  return value;
}

/** The key in a file (its first line; a trailing newline is not part of it), kept out of `ps` and the environment. */
function apiKeyFile(file: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`--${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const key = text.split(/\r?\n/, 1)[0]!.trim();
  if (key === "") throw new UsageError(`--${flag}: ${file} holds no key`);
  return key;
}

/** An integer flag in [min, max]; the message names the flag. */
const int =
  (min: number, max?: number) =>
  (raw: string, flag: string): number =>
    intArg(flag, raw, min, max)!;

const AGENT_FLAGS = flagGroup<AgentOptions>(AGENT_DEFAULTS, [
  { key: "coordinator", flags: "--coordinator <host:port>", description: "coordinator address", parse: coordinatorAddress, mandatory: true },
  { key: "engineUrl", flags: "--engine <url>", description: "engine base URL, e.g. http://127.0.0.1:8000", parse: engineUrl, mandatory: true },
  { key: "method", flags: "--method <name>", description: `engine method (${Object.keys(METHODS).join(", ")}), or "any": the one each run names (a sweep)`, parse: engineMethod },
  { key: "model", flags: "--model <name>", description: "model to ask the engine for", defaultText: "the first it serves" },
  { key: "labelReadApi", flags: "--label-read-api <api>", description: "label-read prompts: completions (token ids) or chat (the server's chat template)", parse: labelReadApi },
  {
    key: "engineApiKey",
    flags: "--engine-api-key <key>",
    description:
      "the engine's API key (vLLM's --api-key or VLLM_API_KEY), sent as Authorization: Bearer with every engine request; with --vllm-cmd the engine gets it as VLLM_API_KEY. " +
      "Seen by `ps`: prefer --engine-api-key-file or the variable",
    parse: apiKey,
    defaultText: "none",
  },
  { key: "engineApiKey", flags: "--engine-api-key-file <file>", description: "read --engine-api-key from a file (its first line)", parse: apiKeyFile },
  { key: "token", flags: "--token <token>", description: "bearer token the coordinator expects" },
  { key: "tlsCa", flags: "--tls-ca <file>", description: "CA certificate (PEM) of the coordinator; enables TLS" },
  { key: "tlsCert", flags: "--tls-cert <file>", description: "client certificate (PEM) for mutual TLS" },
  { key: "tlsKey", flags: "--tls-key <file>", description: "client key (PEM) for mutual TLS" },
  { key: "capacity", flags: "--capacity <n>", description: "units to hold at once", parse: int(1), defaultText: "the method's engine capacity, 8 for systemone" },
  { key: "concurrency", flags: "--concurrency <n>", description: "records in flight to the engine across units", parse: int(1), defaultText: "2 x capacity" },
  { key: "agentId", flags: "--agent-id <id>", description: "agent id", defaultText: "hostname-pid-random" },
  { key: "heartbeatMs", flags: "--heartbeat-ms <ms>", description: "heartbeat interval", parse: int(10), defaultText: "the coordinator's" },
  { key: "seeds", flags: "--seeds <list>", description: "label-permutation seeds averaged per question, e.g. 0,1,2", parse: parseSeeds, defaultText: "the run's, else one read" },
  { key: "maxConcurrency", flags: "--max-concurrency <n>", description: "upper bound of the adaptive (AIMD) limit on requests in flight to the engine", parse: int(1) },
  {
    key: "vllmCmd",
    flags: "--vllm-cmd <command>",
    description:
      'start the engine as a child process, e.g. "vllm serve MODEL --port 8000"; restarted when it exits, stopped on drain. ' +
      "With {model} in it, a template: the engine is (re)started with the model each run names (a sweep), the agent not ready meanwhile. " +
      "The model comes from the coordinator: it reaches the command as the variable UDM_ENGINE_MODEL, one argument whether {model} is quoted or not, " +
      "never as shell text, and a run whose model is not a model id (letters, digits, . _ - / : @ +, up to 256 characters) is refused",
  },
  { key: "requestTimeoutMs", flags: "--request-timeout-ms <ms>", description: "time one engine request may take before it is retried", parse: int(1) },
  { key: "retries", flags: "--retries <n>", description: "retries of a failed engine request before the question is reported as an error", parse: int(0) },
  { key: "engineReadyTimeoutMs", flags: "--engine-ready-timeout-ms <ms>", description: "report an engine that is not ready after this long (the agent keeps trying)", parse: int(1) },
  { key: "maxMessageMb", flags: "--max-message-mb <mb>", description: "largest work unit accepted from the coordinator, in MiB", parse: int(4, 2047) },
  { key: "drainTimeoutMs", flags: "--drain-timeout-ms <ms>", description: "after SIGTERM, how long to finish the units in hand before stopping anyway; what is unfinished goes back to the coordinator", parse: int(0) },
  { key: "metrics", flags: "--metrics <host:port>", description: `serve Prometheus metrics on /metrics (off by default; deployments pass e.g. ${AGENT_METRICS_EXAMPLE})`, parse: (raw) => parseMetricsListen(raw) },
]);

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

export function register(program: Command): void {
  const command = program.command("agent").description("attach to a coordinator and answer its work units through a local engine (vLLM or sim-engine)");
  for (const o of flagOptions(AGENT_FLAGS)) command.addOption(o);
  command.action(async (flags: Record<string, unknown>) => {
    if (flags.engineApiKey !== undefined && flags.engineApiKeyFile !== undefined) throw new UsageError("--engine-api-key and --engine-api-key-file: give one of them");
    const options = optionsFromFlags(AGENT_FLAGS, flags) as AgentOptions;
    if (Boolean(options.tlsCert) !== Boolean(options.tlsKey)) throw new UsageError("--tls-cert and --tls-key go together");
    const logger = createLogger("udm-orch");
    const agent = await Agent.create({ ...options, logger });
    if (agent.metricsUrl) process.stdout.write(`agent ${agent.agentId}: metrics on ${agent.metricsUrl}/metrics\n`);

    let signals = 0;
    const uninstall = onShutdownSignals((signal) => {
      signals++;
      if (signals === 1) {
        logger.info(`${signal}: draining (finishing the units in hand, at most ${agent.drainTimeoutMs} ms); SIGINT again to stop now`);
        agent.shutdown();
      } else if (signal === "SIGINT") {
        logger.warn(`${signal}: stopping now; units in hand go back to the coordinator`);
        agent.stop();
      }
    });
    // Signals while the engine child stops take their default action again, as before the agent ran.
    void agent.detached.then(uninstall);
    const outcome = await agent.run();
    const s = agent.stats();
    process.stdout.write(
      `agent ${agent.agentId}: ${describe(outcome)}; ${s.unitsDone} units, ${s.resultsSent} results sent, ${s.recordFailures} records failed, ${s.disconnects} reconnects, ${agent.engineTimeouts} engine timeouts` +
        `${s.unknownLabels > 0 ? `, ${s.unknownLabels} unknown labels from the engine dropped` : ""}\n`,
    );
    if (outcome.kind === "failed") throw outcome.error;
    if (outcome.kind === "stopped") throw new UdmError("agent stopped before draining; units in hand were returned to the coordinator");
    process.exitCode = EXIT.ok;
  });
}
