// The label trie of label-read, as pure functions: which reads a question's labels need, and each
// label's probability from those reads. A label of several tokens is read as a path in a trie:
// every node that some label continues is one read of the next token's probabilities, and
//   mass(label) = P(label's tokens) x P(no longer label continues | label)
// (the second factor only for a label that is a prefix of another). label-read normalises the
// masses over the options.

/** Node of the trie that needs a read: the ids so far, and the ids that some label adds next. */
export interface TrieNode {
  path: number[];
  next: number[];
}

/** Next-token probabilities read at each node, by pathKey(node.path). */
export type NodeReads = ReadonlyMap<string, ReadonlyMap<number, number>>;

export function pathKey(path: readonly number[]): string {
  return path.join(",");
}

/** The first two labels (indices) that are the same tokens, or undefined when all differ. */
export function sameTokens(labels: readonly (readonly number[])[]): [number, number] | undefined {
  const seen = new Map<string, number>();
  for (const [i, ids] of labels.entries()) {
    const other = seen.get(pathKey(ids));
    if (other !== undefined) return [other, i];
    seen.set(pathKey(ids), i);
  }
  return undefined;
}

/** Every node to read, the root first, in the order the labels reach them. */
export function trieNodes(labels: readonly (readonly number[])[]): TrieNode[] {
  const nodes = new Map<string, TrieNode>();
  for (const ids of labels) {
    for (let d = 0; d < ids.length; d++) {
      const key = pathKey(ids.slice(0, d));
      let node = nodes.get(key);
      if (!node) nodes.set(key, (node = { path: ids.slice(0, d), next: [] }));
      if (!node.next.includes(ids[d]!)) node.next.push(ids[d]!);
    }
  }
  return [...nodes.values()];
}

/** Each label's unnormalised probability from the reads of trieNodes(labels); a missing read counts 0. */
export function labelMasses(labels: readonly (readonly number[])[], reads: NodeReads): number[] {
  return labels.map((ids) => {
    let p = 1;
    for (let d = 0; d < ids.length; d++) p *= reads.get(pathKey(ids.slice(0, d)))?.get(ids[d]!) ?? 0;
    const below = reads.get(pathKey(ids));
    if (below) {
      let continued = 0;
      for (const v of below.values()) continued += v;
      p *= Math.max(0, 1 - continued);
    }
    return p;
  });
}
