// Chat label reads against a sim engine whose tokenizer names tokens by raw vocabulary pieces
// ("Ġ", "Ċ": /tokenize token_strs are convert_ids_to_tokens pieces) and whose chat template thinks
// like Qwen3's (an empty <think> block before an assistant message, in the generation prompt only
// with enable_thinking: false). An oracle at accuracy 1 must give accuracy 1: a reader that joins
// raw pieces as assistant text, or leaves thinking on (every label then starts with the block),
// reads the wrong prefix or gets continue_final_message 400s.
import { afterEach, describe, expect, it } from "vitest";
import { startSimEngine, type SimEngine } from "../../sim/engine/server.js";
import { Oracle, oracleLine } from "../../sim/engine/model/oracle.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import type { RecordPayload } from "../../agent/engine-method.js";
import type { Question } from "../../common/suite/schema.js";
import { choiceQuestion } from "../sim/engine-fixtures.js";
import { startEngineProxy, type EngineProxy } from "./engine-proxy.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const STATE = { text: "Khách hàng phàn nàn rằng đơn hàng đến muộn hai tuần và hộp bị móp.", lang: "vi" };
// 45 options: labels A..Z, AA..AS; "AQ", "AR", "AS" are two tokens ("A" + "Q"), so the reader walks a trie.
const QUESTIONS: Record<string, Question> = {
  wide: choiceQuestion(45, "Which of many?"),
  wideFirst: choiceQuestion(45, "Which of many, again?"),
  small: choiceQuestion(3, "Which team?"),
  flag: { type: "noul", instructions: "Complaint?", criteria: {} },
};
const GOLD: Record<string, string | boolean> = { wide: "o43", wideFirst: "o0", small: "o2", flag: true };

async function setup(seeds: number[]): Promise<{ engine: SimEngine; proxy: EngineProxy; method: LabelReadMethod }> {
  const oracle = new Oracle();
  oracle.add(oracleLine("run-1", STATE, QUESTIONS, GOLD));
  const engine = await startSimEngine({ model: "tiny", seed: 3, thinking: true, oracle, accuracy: 1 });
  const proxy = await startEngineProxy(engine.url);
  closers.push(() => engine.close(), () => proxy.close());
  return { engine, proxy, method: new LabelReadMethod({ baseUrl: proxy.url, api: "chat", seeds, retry: { retries: 0, minBackoffMs: 1, maxBackoffMs: 5 } }) };
}

const record: RecordPayload = { recordKey: "t:r1", id: "r1", state: STATE, questions: QUESTIONS, payloadSha256: "x" };

function argmax(dist: Record<string, number>): string {
  return Object.entries(dist).reduce((best, e) => (e[1] > best[1] ? e : best))[0];
}

describe("label-read (chat) on a thinking template with raw token pieces", () => {
  for (const seeds of [[], [0, 1, 2]]) {
    it(`answers every question with the oracle's gold (seeds ${JSON.stringify(seeds)})`, async () => {
      const { proxy, method } = await setup(seeds);
      const out = await method.answer(record, new AbortController().signal);
      expect(out.errors).toEqual({});
      expect(out.skipped).toEqual([]);
      for (const [k, gold] of Object.entries(GOLD)) expect(argmax(out.probs[k]!), k).toBe(String(gold));
      // The multi-token labels were read as a trie: continuations of the assistant's text.
      const chats = proxy.to("/v1/chat/completions").map((r) => r.body as Record<string, unknown>);
      const continued = chats.filter((b) => b.continue_final_message === true);
      expect(continued.length).toBeGreaterThan(0);
      for (const b of continued) expect((b.messages as Array<{ content: string }>).at(-1)!.content).toBe("A");
      // Every chat request and chat /tokenize turns the template's thinking off.
      const withMessages = [...chats, ...proxy.to("/tokenize").map((r) => r.body as Record<string, unknown>).filter((b) => b.messages !== undefined)];
      for (const b of withMessages) expect(b.chat_template_kwargs).toEqual({ enable_thinking: false });
    });
  }
});
