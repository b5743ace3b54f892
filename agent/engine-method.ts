// What the attach loop needs from an engine method (systemone, decisions, label-read): answer one
// record's questions. Methods are stateless per record apart from caches; retries live inside.
import type { Question } from "../common/suite/index.js";
import type { Distribution } from "../common/results/index.js";

/** One record as an agent receives it: state and questions only, never gold. */
export interface RecordPayload {
  recordKey: string;
  id: string;
  state: Record<string, string>;
  questions: Record<string, Question>;
  payloadSha256: string;
}

export interface TokenUsage {
  promptTokens: number;
  /**
   * Prompt tokens the engine's prefix cache served; null when unknown: some request of the record
   * was answered without a cached count (vLLM's /v1/systemone DecisionUsage has only
   * input_tokens/output_tokens, and completions report prompt_tokens_details only when the server
   * runs with --enable-prompt-tokens-details).
   */
  cachedTokens: number | null;
  completionTokens: number;
  /** HTTP requests sent to the engine for this record, retries included. */
  requests: number;
}

export interface RecordAnswer {
  /** question key -> distribution over its option keys (noul: {"true": p, "false": 1-p}). */
  probs: Record<string, Distribution>;
  /** Questions not run (prompt longer than max_model_len). */
  skipped: string[];
  /** Questions that failed after the last retry: key -> message. */
  errors: Record<string, string>;
  usage: TokenUsage;
  latencyMs: number;
  /** question key -> the method that answered it. */
  answeredBy: Record<string, string>;
  retries: number;
  approximate: boolean;
  /** Option labels the engine answered that the question does not have: dropped, and counted here. */
  unknownLabels?: number;
}

export interface EngineInfo {
  /** Model name as served (`id` from /v1/models). */
  model: string;
  maxModelLen: number;
  /** Records the engine can usefully work on at once (drives the agent's credit). */
  capacity: number;
}

export interface EngineMethod {
  readonly name: "systemone" | "decisions" | "label-read";
  /** Reads /v1/models and the like; throws while the engine is unreachable. */
  info(signal?: AbortSignal): Promise<EngineInfo>;
  /** Answers every question of the record; never throws for a per-question failure. */
  answer(record: RecordPayload, signal: AbortSignal): Promise<RecordAnswer>;
  /** The run's method parameters from the coordinator's Welcome (label-permutation seeds). */
  applyRunParams?(params: RunParams): void;
}

export interface RunParams {
  /** Label-permutation seeds averaged per question; empty = the agent's own (--seeds), else one read. */
  seeds: readonly number[];
}

/** Adds one engine response's token counts; an unknown cached count makes the record's unknown. */
export function addUsage(usage: TokenUsage, add: { prompt: number; completion: number; cached: number | undefined }): void {
  usage.promptTokens += add.prompt;
  usage.completionTokens += add.completion;
  usage.cachedTokens = usage.cachedTokens === null || add.cached === undefined ? null : usage.cachedTokens + add.cached;
}

/** An answer with nothing in it yet, for a method to fill in. */
export function emptyAnswer(): RecordAnswer {
  return {
    probs: {},
    skipped: [],
    errors: {},
    usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0, requests: 0 },
    latencyMs: 0,
    answeredBy: {},
    retries: 0,
    approximate: false,
  };
}
