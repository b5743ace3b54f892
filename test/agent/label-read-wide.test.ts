// LabelReadMethod with more label tokens at one trie node than one read may ask for: vLLM takes at
// most 128 logprob_token_ids a request (vllm/sampling_params.py MAX_LOGPROB_TOKEN_IDS; the sim
// refuses more with vLLM's 400), so the method reads a node in reads of 128 ids. Against the real
// simulated engine on 127.0.0.1:0.
import { describe, expect, it } from "vitest";
import { SimTokenizer } from "../../sim/engine/model/tokenizer.js";
import { choiceLabels } from "../../agent/methods/label-read-template.js";
import { trieNodes } from "../../agent/methods/label-trie.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import { distributionProblem } from "../../common/results/format.js";
import { choiceQuestion } from "../sim/engine-fixtures.js";
import { labelReadSetup } from "./label-read-setup.js";

const { setup } = labelReadSetup();

/** The label tokens of `n` options for the sim's tokenizer (what "Answer: X" adds after "Answer:"), by trie node. */
function nodesOf(n: number): Array<{ path: number[]; next: number[] }> {
  const tokenizer = new SimTokenizer();
  const tail = tokenizer.encode("Answer:", false).length;
  return trieNodes(choiceLabels(n).map((l) => tokenizer.encode(`Answer: ${l}`, false).slice(tail)));
}

async function read(n: number) {
  const { engine, method } = await setup();
  const q = choiceQuestion(n, "Which intent?");
  const record: RecordPayload = { recordKey: "t:r1", id: "r1", state: { text: "short" }, questions: { q }, payloadSha256: "x" };
  const out = await method.answer(record, new AbortController().signal);
  expect(out.errors).toEqual({});
  expect(out.approximate).toBe(false);
  expect(distributionProblem(out.probs.q!, Object.keys(q.criteria))).toBeUndefined();
  return { engine, out };
}

describe("LabelReadMethod: a trie node with more than 128 label tokens", () => {
  it("200 options: the root's 138 first tokens go in two reads (128 + 10), every read accepted", async () => {
    const nodes = nodesOf(200);
    expect(nodes[0]!.path).toEqual([]);
    expect(nodes[0]!.next).toHaveLength(138);
    const { engine } = await read(200);
    expect(engine.stats().byStatus[400] ?? 0).toBe(0);
    expect(engine.stats().byEndpoint["/v1/completions"]).toBe(nodes.length + 1);
  });

  it("188 options: exactly 128 first tokens are one read, no empty second one", async () => {
    const nodes = nodesOf(188);
    expect(nodes[0]!.next).toHaveLength(128);
    expect(nodes.every((n) => n.next.length <= 128)).toBe(true);
    const { engine } = await read(188);
    expect(engine.stats().byEndpoint["/v1/completions"]).toBe(nodes.length);
  });
});
