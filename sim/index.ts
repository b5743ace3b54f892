// The simulated engine's front door: the vLLM stand-in (sim/engine) and the synthetic suite maker
// (sim/suite-maker) used by the demo, the tests and the benchmarks.
export type { SimEngineOptions } from "./engine/context.js";
export { parseFaults } from "./engine/faults.js";
export { seededRandom } from "./engine/model/deterministic.js";
export { Oracle, oracleFromSuite } from "./engine/model/oracle.js";
export { startSimEngine, type SimEngine } from "./engine/server.js";
export { apiKeysOf as simApiKeys, UNAUTHORIZED_BODY, VLLM_API_KEY_ENV } from "./engine/api-key.js";
export { TOKENIZER_NAMES, isTokenizerName, type EngineTokenizer, type TokenizerName } from "./engine/model/engine-tokenizer.js";
export { loadHfTokenizer } from "./engine/model/hf-tokenizer.js";
export { VLLM_PROFILES, isVllmProfile, type VllmProfile } from "./engine/vllm-profile.js";
export type { SuiteScale } from "./suite-maker/plan.js";
export { makeSuite } from "./suite-maker/suite-maker.js";
