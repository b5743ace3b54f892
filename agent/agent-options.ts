// An agent process's options, declared once: each field documents its default, AGENT_DEFAULTS
// holds those defaults (cli/agent.ts shows them in --help) and withAgentDefaults() applies them.
import { createLogger, type Logger } from "../common/log.js";
import type { ListenAddress } from "../common/metrics/index.js";
import { DEFAULT_MAX_CONCURRENCY } from "./adaptive-concurrency.js";
import { DEFAULT_RETRY_POLICY } from "./methods/engine-call.js";

export interface AgentOptions {
  /** Coordinator address, "host:port". */
  coordinator: string;
  /** Engine base URL without a trailing slash, e.g. http://127.0.0.1:8000. */
  engineUrl: string;
  /**
   * Engine method (agent/method-table.ts), or "any": the one each run names (a sweep).
   * @default "systemone"
   */
  method?: string;
  /**
   * Model to ask the engine for; with a {model} template in vllmCmd, the model it starts with.
   * @default the first the engine serves
   */
  model?: string;
  /**
   * Label-read prompts: completions (token ids) or chat (the server's chat template).
   * @default "completions"
   */
  labelReadApi?: "completions" | "chat";
  /**
   * The engine's API key (vLLM's --api-key or VLLM_API_KEY), sent as `Authorization: Bearer KEY`
   * with every engine request; with vllmCmd the engine gets it as VLLM_API_KEY. @default none
   */
  engineApiKey?: string;
  /** Bearer token the coordinator expects. @default none */
  token?: string;
  /** CA certificate (PEM) of the coordinator; enables TLS. @default none (insecure) */
  tlsCa?: string;
  /** Client certificate (PEM) for mutual TLS, with tlsKey. @default none */
  tlsCert?: string;
  /** Client key (PEM) for mutual TLS, with tlsCert. @default none */
  tlsKey?: string;
  /** Units to hold at once. @default the method's engine capacity */
  capacity?: number;
  /** Records in flight to the engine across units. @default 2 x capacity */
  concurrency?: number;
  /** @default hostname-pid-random */
  agentId?: string;
  /** Heartbeat interval in ms. @default the coordinator's */
  heartbeatMs?: number;
  /** Label-permutation seeds averaged per question until a run names its own. @default [] (one read) */
  seeds?: number[];
  /** Upper bound of the adaptive (AIMD) limit on requests in flight to the engine (from 8 at first). @default 256 (DEFAULT_MAX_CONCURRENCY) */
  maxConcurrency?: number;
  /**
   * Shell command that serves the engine as a child process (restarted when it exits, stopped on
   * drain); with {model} in it, a template started with each run's model. @default none
   */
  vllmCmd?: string;
  /** Time one engine request may take before it is retried. @default 120000 (DEFAULT_RETRY_POLICY) */
  requestTimeoutMs?: number;
  /** Retries of a failed engine request before the question is reported as an error. @default 4 (DEFAULT_RETRY_POLICY) */
  retries?: number;
  /** An engine not ready this long is reported in the log (the agent keeps trying). @default 60000 */
  engineReadyTimeoutMs?: number;
  /** Largest work unit accepted from the coordinator, in MiB. @default 256 */
  maxMessageMb?: number;
  /** How long shutdown() finishes the units in hand before stopping anyway. @default 5000 */
  drainTimeoutMs?: number;
  /** Where Prometheus metrics are served on /metrics. @default none (off) */
  metrics?: ListenAddress;
  /** @default a "udm-orch" logger */
  logger?: Logger;
}

/** The options that have a value when not given. */
type Defaulted = "method" | "labelReadApi" | "seeds" | "maxConcurrency" | "requestTimeoutMs" | "retries" | "engineReadyTimeoutMs" | "maxMessageMb" | "drainTimeoutMs";

export const AGENT_DEFAULTS: Readonly<Required<Pick<AgentOptions, Defaulted>>> = {
  method: "systemone",
  labelReadApi: "completions",
  seeds: [],
  maxConcurrency: DEFAULT_MAX_CONCURRENCY,
  requestTimeoutMs: DEFAULT_RETRY_POLICY.timeoutMs,
  retries: DEFAULT_RETRY_POLICY.retries,
  engineReadyTimeoutMs: 60_000,
  maxMessageMb: 256,
  drainTimeoutMs: 5_000,
};

/** AgentOptions with every default applied. */
export type ResolvedAgentOptions = AgentOptions & Required<Pick<AgentOptions, Defaulted | "logger">>;

export function withAgentDefaults(options: AgentOptions): ResolvedAgentOptions {
  const set = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as AgentOptions;
  return { ...AGENT_DEFAULTS, seeds: [...AGENT_DEFAULTS.seeds], ...set, logger: options.logger ?? createLogger("udm-orch") };
}

export const MIB = 1024 * 1024;
