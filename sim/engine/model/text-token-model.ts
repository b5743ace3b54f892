// The sim's generation model over a real tokenizer's vocabulary (hf-tokenizer.ts). It reads the
// prompt as text, as an instruction-tuned model would: the options listed after the last
// "Question:" as "<label>: <text>" lines, and the point where the answer begins, which is the end
// of a prompt that ends in ":" ("Answer:") or a line break (a chat template's generation prompt).
// From there it says one option's label as the tokenizer writes it in that place (" B" after
// "Answer:" is Llama's "ĠB", Gemma's "▁B"; "B" after a line break), and the probability of each
// next token is the exact conditional of its option distribution on the label trie
// (label-distribution.ts). The option distribution is the oracle's when the caller passes one
// (context.ts labelTarget), else a softmax of seeded hashes of the option lines plus a preference
// for the first labels (the label-position bias that label permutations cancel).
//
// Qwen3's template is a thinking one: a reply opens with a reasoning block. After a bare
// generation prompt ("<|im_start|>assistant\n", what chat_template_kwargs enable_thinking false
// replaces by the prompt plus an empty block) the model writes the empty block "<think>\n\n</think>\n\n"
// first, so a label read without the switch sees its labels only after those tokens.
import { createHash } from "node:crypto";
import type { HfTokenizer } from "./hf-tokenizer.js";
import { labelNode, SparseDistribution, type LabelTarget, type NextTokenDistribution } from "./label-distribution.js";
import type { NextTokenModel } from "./token-model.js";

/** Labels of at most this many tokens are followed. */
const MAX_LABEL_TOKENS = 4;
/** Tokens of the prompt's end decoded to find the answer point and its tokenization. */
const TAIL_TOKENS = 3;
const OPTION_LINE = /^([A-Z]{1,3}|[0-9]{1,3}|yes|no):[ \t]?(.*)$/;
/** Label mass of the first token, oracle mode (the rest: other tokens). */
const ORACLE_LABEL_MASS = 0.95;
/** Logit bonus of the first label over the last (label-position bias). */
const POSITION_BIAS = 1;

function unit(...parts: ReadonlyArray<string | number>): number {
  return createHash("sha256").update(parts.map(String).join("\u0000")).digest().readUIntBE(0, 6) / 2 ** 48;
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

export class TextTokenModel implements NextTokenModel {
  /** Label tokens after a prompt tail, by tail text and label. */
  private readonly continuations = new Map<string, number[] | null>();
  private readonly end: number;
  /** Qwen3's empty reasoning block, token by token, after a bare generation prompt. */
  private readonly thinkBlock: { open: number[]; block: number[] } | undefined;

  constructor(
    private readonly seed: number,
    private readonly tokenizer: HfTokenizer,
  ) {
    this.end = [...tokenizer.eosIds][0] ?? 0;
    this.thinkBlock =
      tokenizer.name === "qwen3"
        ? { open: tokenizer.encode("<|im_start|>assistant\n"), block: tokenizer.encode("<think>\n\n</think>\n\n") }
        : undefined;
  }

  next(context: readonly number[], target?: LabelTarget): NextTokenDistribution {
    const forced = this.thinking(context);
    if (forced !== undefined) return new SparseDistribution(new Map([[forced, 0.999]]), this.end, this.tokenizer.vocabSize);
    const options = target ?? this.options(this.tokenizer.text(context));
    if (options && options.labels.length > 0) {
      const node = this.labelNode(context, options, target ? ORACLE_LABEL_MASS : 0.8 + 0.19 * unit(this.seed, "mass", options.labels.join("\n")));
      if (node) return new SparseDistribution(node, this.end, this.tokenizer.vocabSize);
    }
    return new SparseDistribution(new Map(), this.end, this.tokenizer.vocabSize);
  }

  /** Inside Qwen3's empty reasoning block after a bare generation prompt: its next token. */
  private thinking(context: readonly number[]): number | undefined {
    if (!this.thinkBlock) return undefined;
    const { open, block } = this.thinkBlock;
    for (let done = 0; done < block.length; done++) {
      const at = context.length - done - open.length;
      if (at < 0) break;
      if (startsWith(context.slice(at), [...open, ...block.slice(0, done)])) return block[done];
    }
    return undefined;
  }

  /** The options listed after the last "Question:", with the model's own distribution over them. */
  private options(text: string): LabelTarget | undefined {
    const at = text.lastIndexOf("Question:");
    if (at < 0) return undefined;
    const lines = text.slice(at).split("\n");
    const listed: Array<{ label: string; text: string }> = [];
    for (const line of lines.slice(1)) {
      const m = OPTION_LINE.exec(line);
      if (m) listed.push({ label: m[1]!, text: m[2]! });
      else if (listed.length > 0) break;
    }
    if (listed.length === 0) return undefined;
    // The question and what the prompt says just before it (the record's state).
    const question = text.slice(Math.max(0, at - 512), at) + lines[0]!;
    const n = listed.length;
    const logits = listed.map((o, i) => 3 * unit(this.seed, "option", question, o.text) + (n > 1 ? POSITION_BIAS * (1 - i / (n - 1)) : 0));
    const top = Math.max(...logits);
    const w = logits.map((l) => Math.exp(l - top));
    const z = w.reduce((a, b) => a + b, 0);
    return { labels: listed.map((o) => o.label), probs: w.map((x) => x / z) };
  }

  /**
   * The answer point is the latest place, at most MAX_LABEL_TOKENS from the end, where the prompt
   * ends in ":" or a line break and the tokens after it begin some label; the next token's
   * probabilities are the conditionals there.
   */
  private labelNode(context: readonly number[], options: LabelTarget, rootMass: number): Map<number, number> | undefined {
    for (let d = 0; d <= MAX_LABEL_TOKENS && d < context.length; d++) {
      const cut = context.length - d;
      const tail = this.tokenizer.text(context.slice(Math.max(0, cut - TAIL_TOKENS), cut));
      if (!/[:\n]$/.test(tail)) continue;
      const path = context.slice(cut);
      const labels = options.labels.map((l) => this.continuation(tail, l) ?? []);
      if (!labels.some((ids) => ids.length >= d && startsWith(ids, path))) continue;
      return labelNode(labels, options.probs, path, rootMass);
    }
    return undefined;
  }

  /** The tokens a label adds after `tail`: " <label>" after ":", "<label>" after a line break. */
  private continuation(tail: string, label: string): number[] | null {
    const key = `${tail}\u0000${label}`;
    let ids = this.continuations.get(key);
    if (ids === undefined) {
      const base = this.tokenizer.encode(tail);
      const full = this.tokenizer.encode(`${tail}${tail.endsWith("\n") ? "" : " "}${label}`);
      ids = startsWith(full, base) && full.length > base.length ? full.slice(base.length) : null;
      if (this.continuations.size > 100_000) this.continuations.clear();
      this.continuations.set(key, ids);
    }
    return ids;
  }
}
