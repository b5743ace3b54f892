// `sweep --dry-run`: what each run of the matrix will cost before anything runs. Prompt text is
// measured from the suite (state and questions as the engine methods send them); tokens come from
// the engine's POST /tokenize on a sample of the suite's prompts when an engine is reachable (the
// measured characters per token then scale to every prompt), else from a stated chars-per-token
// ratio. GPU time is tokens over a stated engine throughput; cost is GPU-hours x the GPU-hour price.
import { redactUrl } from "../../common/redact-url.js";
import { limitRecords, openSuite, readTrackRecords, selectFiles, type SuiteRecord } from "../../common/suite/index.js";
import type { SweepRun } from "./sweep-config.js";

export interface SuiteText {
  records: number;
  questions: number;
  /** Characters of one read of every record (state + all its questions): systemone, decisions. */
  recordChars: number;
  /** Characters of one read of every question (state + that question): label-read. */
  questionChars: number;
  /** Prompts to measure tokens per character on. */
  sample: string[];
}

const SAMPLE_PROMPTS = 200;

/** `scope.limit`: records per track at most (a limited sweep: only those are sent). */
export async function measureSuiteText(suiteDir: string, scope: { tracks?: readonly string[]; families?: readonly string[]; limit?: number }): Promise<SuiteText> {
  const suite = openSuite(suiteDir);
  const files = selectFiles(suite, { ...(scope.tracks ? { tracks: scope.tracks } : {}), ...(scope.families ? { families: scope.families } : {}) });
  const out: SuiteText = { records: 0, questions: 0, recordChars: 0, questionChars: 0, sample: [] };
  let seen = 0;
  for (const file of files) {
    let records: AsyncIterable<SuiteRecord> | SuiteRecord[] = readTrackRecords(file);
    if (scope.limit !== undefined) {
      const all: SuiteRecord[] = [];
      for await (const r of records) all.push(r);
      records = limitRecords(all, (r) => r.metadata.group_id, scope.limit);
    }
    for await (const r of records) {
      const state = JSON.stringify(r.state);
      const qs = Object.values(r.questions).map((q) => JSON.stringify({ instructions: q.instructions, criteria: q.criteria }));
      const prompt = state + qs.join("");
      out.records++;
      out.questions += qs.length;
      out.recordChars += prompt.length;
      for (const q of qs) out.questionChars += state.length + q.length;
      // Reservoir sample, so the ratio is not the first track's.
      seen++;
      if (out.sample.length < SAMPLE_PROMPTS) out.sample.push(prompt);
      else {
        const j = Math.floor(((seen * 2654435761) >>> 0) % seen);
        if (j < SAMPLE_PROMPTS) out.sample[j] = prompt;
      }
    }
  }
  return out;
}

export interface TokenRatio {
  charsPerToken: number;
  /** How the ratio was found, for the printout. */
  source: string;
}

/** Characters per token measured through the engine's /tokenize, or undefined when it does not answer. */
export async function measureCharsPerToken(engineUrl: string, sample: readonly string[]): Promise<TokenRatio | undefined> {
  let chars = 0;
  let tokens = 0;
  try {
    for (const prompt of sample) {
      const res = await fetch(`${engineUrl.replace(/\/+$/, "")}/tokenize`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt, add_special_tokens: false }),
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) return undefined;
      const body = (await res.json()) as { count?: unknown };
      if (typeof body.count !== "number") return undefined;
      chars += prompt.length;
      tokens += body.count;
    }
  } catch {
    return undefined;
  }
  if (tokens === 0) return undefined;
  return { charsPerToken: chars / tokens, source: `measured through ${redactUrl(engineUrl)}/tokenize on ${sample.length} prompts of the suite` };
}

export interface RunEstimate {
  run: string;
  promptTokens: number;
  completionTokens: number;
  gpuHours: number;
  /** null when the GPU-hour price is 0 (unknown). */
  costUsd: number | null;
}

export interface EstimateAssumptions {
  ratio: TokenRatio;
  /** Tokens (prompt + completion) one GPU processes per second. */
  tokensPerGpuSecond: number;
  gpuHourUsd: number;
}

/**
 * One run's tokens: label-read sends the state once per question, the others once per record;
 * each label-permutation seed is one more read; one completion token per question per read.
 */
export function estimateRun(run: SweepRun, text: SuiteText, a: EstimateAssumptions): RunEstimate {
  const reads = Math.max(1, run.seeds.length);
  const chars = (run.method === "label-read" ? text.questionChars : text.recordChars) * reads;
  const promptTokens = Math.round(chars / a.ratio.charsPerToken);
  const completionTokens = text.questions * reads;
  const gpuHours = (promptTokens + completionTokens) / a.tokensPerGpuSecond / 3600;
  return { run: run.name, promptTokens, completionTokens, gpuHours, costUsd: a.gpuHourUsd > 0 ? gpuHours * a.gpuHourUsd : null };
}
