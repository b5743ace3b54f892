// The next-token distribution of a model that has one distribution over a question's options and
// says an option by writing its label: at each node of the label trie (the label tokens said so
// far) the probability of each next token is exactly the conditional of that option distribution,
//   P(t | path) = mass(options whose label continues path with t) / mass(options under path),
// and a label that ends at the node keeps its share as the probability of stopping (the end token
// and the rest of the vocabulary). So a reader that multiplies the token probabilities along each
// label (and by the stop probability where a longer label continues it), as label-read does,
// gets back exactly the option distribution that /v1/systemone and /v1/decisions answer with:
// the oracle is method-neutral, whatever the tokenizer makes of the labels.

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

/** The options a prompt lists, by label, and the model's probability of each. */
export interface LabelTarget {
  /** Labels in the order the prompt lists them. */
  labels: readonly string[];
  /** Probability of each label's option; sums to 1. */
  probs: readonly number[];
}

/** Least probability left off the explicit tokens, so no logprob is -Infinity (not JSON). */
const LEAK = 1e-9;
/** Share of the leftover probability on the end token; the rest is spread over the vocabulary. */
const END_SHARE = 0.9;

/** Explicit probabilities for a few tokens; what they leave goes to the end token and, evenly, to every other token. */
export class SparseDistribution implements NextTokenDistribution {
  private readonly explicit: Map<number, number>;
  private readonly endP: number;
  private readonly backgroundP: number;
  private readonly order: number[];

  constructor(
    explicit: ReadonlyMap<number, number>,
    private readonly endId: number,
    private readonly vocabSize: number,
  ) {
    let sum = 0;
    for (const p of explicit.values()) sum += p;
    const scale = sum > 1 - LEAK ? (1 - LEAK) / sum : 1;
    this.explicit = new Map([...explicit].map(([id, p]) => [id, p * scale]));
    const rest = 1 - sum * scale;
    const others = vocabSize - this.explicit.size - (this.explicit.has(endId) ? 0 : 1);
    this.endP = this.explicit.has(endId) ? this.explicit.get(endId)! : rest * END_SHARE;
    this.backgroundP = (rest * (this.explicit.has(endId) ? 1 : 1 - END_SHARE)) / Math.max(1, others);
    this.order = [...this.explicit.keys()].sort((a, b) => this.explicit.get(b)! - this.explicit.get(a)! || a - b);
  }

  private prob(id: number): number {
    return this.explicit.get(id) ?? (id === this.endId ? this.endP : this.backgroundP);
  }

  logprob(id: number): number {
    return Math.log(this.prob(id));
  }

  top(k: number): TokenLogprob[] {
    const ids: number[] = [];
    let placedEnd = this.explicit.has(this.endId);
    for (const id of this.order) {
      if (!placedEnd && this.endP > this.explicit.get(id)!) {
        ids.push(this.endId);
        placedEnd = true;
      }
      ids.push(id);
    }
    if (!placedEnd) ids.push(this.endId);
    // Every other token ties; the lowest ids first, as a sort would.
    for (let id = 0; ids.length < k && id < this.vocabSize; id++) if (id !== this.endId && !this.explicit.has(id)) ids.push(id);
    return ids.slice(0, k).map((id) => ({ id, logprob: this.logprob(id) }));
  }

  argmax(): TokenLogprob {
    return this.top(1)[0]!;
  }
}

/**
 * The explicit next-token probabilities at `path` of the trie of `labelIds` (each option's label
 * tokens, aligned with `probs`): the conditionals of the option distribution, times `rootMass`
 * at the root (the probability the model answers with a label at all). Undefined when no label
 * starts with `path`.
 */
export function labelNode(labelIds: readonly (readonly number[])[], probs: readonly number[], path: readonly number[], rootMass: number): Map<number, number> | undefined {
  let under = 0;
  const next = new Map<number, number>();
  labelIds.forEach((ids, i) => {
    if (ids.length < path.length) return;
    for (let d = 0; d < path.length; d++) if (ids[d] !== path[d]) return;
    under += probs[i]!;
    if (ids.length > path.length) next.set(ids[path.length]!, (next.get(ids[path.length]!) ?? 0) + probs[i]!);
  });
  if (!(under > 0)) return labelIds.some((ids) => path.every((id, d) => ids[d] === id) && ids.length >= path.length) ? new Map() : undefined;
  const scale = (path.length === 0 ? rootMass : 1) / under;
  for (const [id, p] of next) next.set(id, p * scale);
  return next;
}
