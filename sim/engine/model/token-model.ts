// The sim's generation model: a next-token distribution over the whole vocabulary for any
// context of token ids, so /v1/completions and /v1/chat/completions return logprobs that a label
// reader can normalise exactly. Like an instruction-tuned model it puts its mass on the labels of
// the options listed in the prompt (lines "<label>: <text>"), and continues a label it has begun
// (after "A" it favours the second tokens of the labels starting with "A"). The score of an option
// is a seeded hash of the context and the option's text, plus a small preference for the first
// labels: the label-position bias that reading under several label permutations cancels.
// Everything else in the fixed vocabulary gets a low hashed logit, the hashed range one constant.
import { createHash } from "node:crypto";
import { SimTokenizer, VOCAB_SIZE } from "./tokenizer.js";

const BACKGROUND_LOGIT = -16;
/** Longest label (in tokens) the model recognises in an option line. */
const MAX_LABEL_TOKENS = 3;

export interface TokenLogprob {
  id: number;
  logprob: number;
}

export interface NextTokenDistribution {
  logprob(id: number): number;
  /** The k most likely tokens, most likely first. */
  top(k: number): TokenLogprob[];
  /** The greedy (temperature 0) choice. */
  argmax(): TokenLogprob;
}

function mix32(a: number, b: number): number {
  let h = (a ^ Math.imul(b, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

function hashIds(seed: number, ids: readonly number[]): number {
  const buf = Buffer.from(new Int32Array([seed, ...ids]).buffer);
  return createHash("sha256").update(buf).digest().readUInt32BE(0);
}

export class TokenModel {
  private readonly fixed = SimTokenizer.fixedVocabSize;
  private readonly newline: number;
  private readonly colon: number;
  private readonly question: number;
  private readonly labelLike: Set<number>;

  constructor(
    private readonly seed: number,
    tokenizer: SimTokenizer,
  ) {
    this.newline = tokenizer.idOf("\n")!;
    this.colon = tokenizer.idOf(":")!;
    this.question = tokenizer.idOf("Question")!;
    this.labelLike = new Set<number>();
    for (let id = 0; id < this.fixed; id++) {
      const s = tokenizer.decodeToken(id);
      if (/^([A-Z]{1,2}|[0-9]|yes|no|Yes|No|YES|NO|true|false)$/.test(s)) this.labelLike.add(id);
    }
  }

  /** The distribution of the token after `context`. */
  next(context: readonly number[]): NextTokenDistribution {
    const ctx = hashIds(this.seed, context);
    const logits = new Float64Array(this.fixed);
    for (let id = 0; id < this.fixed; id++) logits[id] = -10 + 4 * mix32(ctx, id);
    for (const [id, boost] of this.boosts(context, ctx)) logits[id] = boost;
    let top = -Infinity;
    for (const l of logits) top = Math.max(top, l);
    let z = (VOCAB_SIZE - this.fixed) * Math.exp(BACKGROUND_LOGIT - top);
    for (const l of logits) z += Math.exp(l - top);
    const logZ = top + Math.log(z);
    const logprob = (id: number): number => (id >= 0 && id < this.fixed ? logits[id]! : BACKGROUND_LOGIT) - logZ;
    const fixed = this.fixed;
    return {
      logprob,
      top(k: number): TokenLogprob[] {
        const ids = Array.from({ length: fixed }, (_, i) => i).sort((a, b) => logits[b]! - logits[a]! || a - b);
        const out = ids.slice(0, Math.min(k, fixed)).map((id) => ({ id, logprob: logprob(id) }));
        // Past the fixed vocabulary every token ties; report the lowest ids, as a sort would.
        for (let id = fixed; out.length < k && id < VOCAB_SIZE; id++) out.push({ id, logprob: logprob(id) });
        return out;
      },
      argmax(): TokenLogprob {
        let best = 0;
        for (let id = 1; id < fixed; id++) if (logits[id]! > logits[best]!) best = id;
        return { id: best, logprob: logprob(best) };
      },
    };
  }

  /** Logits of the tokens that continue a listed option's label after the label begun at the end of the context. */
  private boosts(context: readonly number[], ctx: number): Map<number, number> {
    // The label begun: trailing label-like tokens after ":" or a line break.
    let start = context.length;
    while (start > 0 && context.length - start < MAX_LABEL_TOKENS && this.labelLike.has(context[start - 1]!)) start--;
    const begun = context.slice(start);
    // Options are read after the last "Question" token (the whole context when there is none).
    let from = context.lastIndexOf(this.question);
    if (from < 0) from = 0;
    const end = start; // the option lines are in the prompt, not in the label begun
    const lines: Array<{ label: number[]; text: number }> = [];
    for (let i = from; i < end; i++) {
      if (i !== 0 && context[i - 1] !== this.newline) continue;
      let j = i;
      while (j < end && j - i < MAX_LABEL_TOKENS && this.labelLike.has(context[j]!)) j++;
      if (j === i || context[j] !== this.colon) continue;
      let k = j + 1;
      let h = 0x811c9dc5;
      while (k < end && context[k] !== this.newline) h = Math.imul(h ^ context[k++]!, 0x01000193) >>> 0;
      lines.push({ label: context.slice(i, j), text: h });
    }
    const out = new Map<number, number>();
    lines.forEach((line, position) => {
      if (line.label.length <= begun.length) return;
      for (let t = 0; t < begun.length; t++) if (line.label[t] !== begun[t]) return;
      const bias = lines.length > 1 ? 1 - position / (lines.length - 1) : 0;
      const score = 5 + 3 * mix32(ctx, line.text) + bias;
      const id = line.label[begun.length]!;
      out.set(id, Math.max(out.get(id) ?? -Infinity, score));
    });
    return out;
  }
}
