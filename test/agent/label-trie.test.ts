// The pure label-trie reader of label-read: which nodes a set of labels needs read, and each
// label's mass from the reads, as tables.
import { describe, expect, it } from "vitest";
import { labelMasses, pathKey, sameTokens, trieNodes, type TrieNode } from "../../agent/methods/label-trie.js";

const reads = (entries: Record<string, Record<number, number>>) =>
  new Map(Object.entries(entries).map(([k, v]) => [k, new Map(Object.entries(v).map(([id, p]) => [Number(id), p]))]));

describe("trieNodes", () => {
  it.each<[string, number[][], TrieNode[]]>([
    ["one-token labels: one read at the root", [[1], [2], [3]], [{ path: [], next: [1, 2, 3] }]],
    ["a shared first token: root + one deeper read", [[1, 5], [1, 6], [2]], [{ path: [], next: [1, 2] }, { path: [1], next: [5, 6] }]],
    ["a label that is a prefix of another", [[1], [1, 7]], [{ path: [], next: [1] }, { path: [1], next: [7] }]],
    ["three levels", [[4, 5, 6], [4, 5, 9], [4, 8]], [{ path: [], next: [4] }, { path: [4], next: [5, 8] }, { path: [4, 5], next: [6, 9] }]],
    ["no labels", [], []],
  ])("%s", (_name, labels, nodes) => {
    expect(trieNodes(labels)).toEqual(nodes);
  });
});

describe("labelMasses", () => {
  it.each<[string, number[][], Record<string, Record<number, number>>, number[]]>([
    ["one token each: the root's probabilities", [[1], [2]], { "": { 1: 0.6, 2: 0.3 } }, [0.6, 0.3]],
    ["two tokens: product along the path", [[1, 5], [1, 6], [2]], { "": { 1: 0.8, 2: 0.1 }, "1": { 5: 0.5, 6: 0.25 } }, [0.4, 0.2, 0.1]],
    ["a prefix label keeps what no longer label continues", [[1], [1, 7]], { "": { 1: 0.9 }, "1": { 7: 0.25 } }, [0.9 * 0.75, 0.9 * 0.25]],
    ["a node never read counts 0", [[1, 5]], { "": { 1: 0.5 } }, [0]],
    ["continuation mass above 1 (float noise) clamps at 0", [[1], [1, 7]], { "": { 1: 1 }, "1": { 7: 1.0000001 } }, [0, 1.0000001]],
  ])("%s", (_name, labels, nodeReads, masses) => {
    const got = labelMasses(labels, reads(nodeReads));
    got.forEach((m, i) => expect(m).toBeCloseTo(masses[i]!, 12));
  });
});

describe("sameTokens and pathKey", () => {
  it.each<[number[][], [number, number] | undefined]>([
    [[[1], [2], [3]], undefined],
    [[[1, 2], [3], [1, 2]], [0, 2]],
    [[[1], [1, 2], [2, 1]], undefined],
  ])("%j -> %j", (labels, expected) => {
    expect(sameTokens(labels)).toEqual(expected);
  });
  it("keys the root as the empty string", () => {
    expect(pathKey([])).toBe("");
    expect(pathKey([3, 14])).toBe("3,14");
  });
});
