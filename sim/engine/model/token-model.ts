// The sim's generation model: a next-token distribution over the whole vocabulary for any
// context of token ids, so /v1/completions and /v1/chat/completions return logprobs that a label
// reader can normalise exactly. Like an instruction-tuned model it puts its mass on the labels of
// the options listed in the prompt (lines "<label>: <text>"), and continues a label it has begun
// (after "A" it favours the second tokens of the labels starting with "A"). The score of an option
// is a seeded hash of the context and the option's text, plus a small preference for the first
// labels: the label-position bias that reading under several label permutations cancels.
// Everything else in the fixed vocabulary gets a low hashed logit, the hashed range one constant.
// In oracle mode the caller passes the prompt's labels and the oracle's distribution over their
// options (oracle.ts promptTarget): each next token then has exactly that distribution's
// conditional probability on the label trie (label-distribution.ts), so a trie read gives back the
// oracle's distribution, the same one /v1/systemone answers with.
import { createHash } from "node:crypto";
import { labelNode, SparseDistribution, type LabelTarget, type NextTokenDistribution, type TokenLogprob } from "./label-distribution.js";
import { ENDOFTEXT, SimTokenizer, VOCAB_SIZE } from "./tokenizer.js";

export type { LabelTarget, NextTokenDistribution, TokenLogprob } from "./label-distribution.js";

const BACKGROUND_LOGIT = -16;
/** Longest label (in tokens) the model recognises in an option line. */
const MAX_LABEL_TOKENS = 3;

/** Oracle mode: share of the first token's probability on the labels (the rest: other tokens). */
const ORACLE_LABEL_MASS = 0.95;

/** A next-token model the generation endpoints read (TokenModel, TextTokenModel). */
export interface NextTokenModel {
  next(context: readonly number[], target?: LabelTarget): NextTokenDistribution;
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

export class TokenModel implements NextTokenModel {
  private readonly fixed = SimTokenizer.fixedVocabSize;
  private readonly newline: number;
  private readonly colon: number;
  private readonly question: number;
  private readonly labelLike: Set<number>;
  private readonly end: number;

  constructor(
    private readonly seed: number,
    private readonly tokenizer: SimTokenizer,
  ) {
    this.end = tokenizer.idOf(ENDOFTEXT)!;
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
  next(context: readonly number[], target?: LabelTarget): NextTokenDistribution {
    if (target) {
      const oracle = this.oracleNext(context, target);
      if (oracle) return oracle;
    }
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

  /** The label begun at the end of the context: its trailing label-like tokens. */
  private begunLabel(context: readonly number[]): number[] {
    let start = context.length;
    while (start > 0 && context.length - start < MAX_LABEL_TOKENS && this.labelLike.has(context[start - 1]!)) start--;
    return context.slice(start);
  }

  /** Oracle mode: the exact conditionals of the target's distribution at the label begun (its longest trailing part that starts a label). */
  private oracleNext(context: readonly number[], target: LabelTarget): NextTokenDistribution | undefined {
    const labels = target.labels.map((l) => this.tokenizer.encode(l));
    const begun = this.begunLabel(context);
    for (let from = 0; from <= begun.length; from++) {
      const node = labelNode(labels, target.probs, begun.slice(from), ORACLE_LABEL_MASS);
      if (node) return new SparseDistribution(node, this.end, VOCAB_SIZE);
    }
    return undefined;
  }

  /** Logits of the tokens that continue a listed option's label after the label begun at the end of the context. */
  private boosts(context: readonly number[], ctx: number): Map<number, number> {
    // The label begun: trailing label-like tokens after ":" or a line break.
    const begun = this.begunLabel(context);
    const start = context.length - begun.length;
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
