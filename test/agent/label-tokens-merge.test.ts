// Label tokens are what "Answer: X" adds after "Answer:", and only when it starts with the tokens of
// "Answer:". A proxy in front of the real sim stands for a tokenizer that merges the prompt's last
// token with a label (as BPE vocabularies do, e.g. ": A" one token): that label's question cannot
// be read, rather than read through the wrong tokens.
import { afterEach, describe, expect, it } from "vitest";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import { startSimEngine } from "../../sim/engine/server.js";
import { SimTokenizer } from "../../sim/engine/model/tokenizer.js";
import { choiceQuestion } from "../sim/engine-fixtures.js";
import { startEngineProxy } from "./engine-proxy.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const tok = new SimTokenizer();
const COLON = tok.encode(":")[0]!;
/** An id outside the sim's fixed vocabulary for the merged ": A". */
const MERGED = 150_000;

async function read(mergeLabel: string): Promise<{ probs: Record<string, unknown>; errors: Record<string, string> }> {
  const sim = await startSimEngine({ model: "merge", seed: 2 });
  const proxy = await startEngineProxy(sim.url, {
    response: (path, body) => {
      if (path !== "/tokenize") return body;
      const tokens = body.tokens as number[];
      // "Answer: AQ" is [Answer, :, A, Q] for the sim; the merging tokenizer gives [Answer, ": A", Q]:
      // as long as "Answer:" plus the label, but not starting with the tokens of "Answer:".
      if (tokens.length === 4 && tokens[1] === COLON && tokens.slice(2).map((t) => tok.decodeToken(t)).join("") === mergeLabel) {
        const merged = [tokens[0]!, MERGED, tokens[3]!];
        return { ...body, tokens: merged, count: merged.length, token_strs: ["Answer", ": A", "Q"] };
      }
      return body;
    },
  });
  closers.push(() => proxy.close(), () => sim.close());
  // 60 options: the labels past AP are two tokens for the sim's tokenizer ("AQ" is A + Q).
  const record: RecordPayload = { recordKey: "t:r1", id: "r1", state: { text: "state" }, questions: { intent: choiceQuestion(60) }, payloadSha256: "x" };
  return new LabelReadMethod({ baseUrl: proxy.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 } }).answer(record, new AbortController().signal);
}

describe("label tokens when the tokenizer merges the prompt with a label", () => {
  it("reads the question when no label merges", async () => {
    const out = await read("none");
    expect(out.errors).toEqual({});
    expect(Object.keys(out.probs)).toEqual(["intent"]);
  });

  it("a label whose tokens do not continue the prompt's fails its question with a clear reason", async () => {
    const out = await read("AQ");
    expect(out.probs).toEqual({});
    expect(out.errors.intent).toMatch(/label "AQ" does not tokenize as a continuation of the prompt/);
  });
});
