// The agent's front door: what cli/ and bench/ may use of agent/ (the agent process, the attach
// loop, engine methods, the vLLM supervisor). Everything else in agent/ is internal.
export { AdaptiveConcurrency } from "./adaptive-concurrency.js";
export { Agent } from "./agent.js";
export { registerAgentMetrics } from "./agent-metrics.js";
export { AGENT_DEFAULTS, withAgentDefaults, type AgentOptions } from "./agent-options.js";
export { startAgent, type AgentHandle, type AgentOutcome } from "./attach-loop.js";
export { readEngineLoad } from "./engine-load.js";
export type { EngineMethod, RecordPayload, RunParams } from "./engine-method.js";
export { EngineTimeouts } from "./engine-timeouts.js";
export { ANY_METHOD, METHODS, methodFactory, type MethodSetup, type SeededMethod } from "./method-table.js";
export { MethodSwitch } from "./method-switch.js";
export { DecisionsMethod } from "./methods/decisions.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./methods/engine-call.js";
export { LABEL_READ_TEMPLATE_SHA256, LABEL_READ_TEMPLATE_TEXT, LABEL_READ_TEMPLATE_VERSION } from "./methods/label-read-template.js";
export { LabelReadMethod } from "./methods/label-read.js";
export { SystemOneMethod } from "./methods/systemone.js";
export { channelCredentials } from "./transport/coordinator-channel.js";
export { VllmSupervisor } from "./vllm-supervisor.js";
