// The engine methods against every vLLM profile of the sim, with and without seeds, as whole runs:
// methods (systemone, decisions, label-read over completions and over chat) x profiles (legacy,
// structured-seed, current) x seeds ([] and [0, 1, 2]) x tokenizers. An oracle engine at accuracy
// 1 must give 1 on every track (a method that maps labels, options or seeds back wrong shows
// here), no record may end with errors, and the run card names the methods that answered. One
// engine per profile and tokenizer, shared by that profile's runs; a tiny suite (no routing track,
// whose payloads repeat with other gold); then, on `current`, a state over the context is skipped
// in exactly one request by every method.
import { describe, expect, it } from "vitest";
import { startSimEngine } from "../../sim/engine/server.js";
import { SystemOneMethod } from "../../agent/methods/systemone.js";
import { DecisionsMethod } from "../../agent/methods/decisions.js";
import { LabelReadMethod } from "../../agent/methods/label-read.js";
import type { EngineMethod } from "../../agent/engine-method.js";
import type { MethodOptions } from "../../agent/methods/method-options.js";

import { describeMethodsMatrix } from "./methods-matrix.js";

describeMethodsMatrix("builtin");

const makers: Record<string, (o: MethodOptions) => EngineMethod> = {
  systemone: (o) => new SystemOneMethod(o),
  decisions: (o) => new DecisionsMethod(o),
  "label-read (completions)": (o) => new LabelReadMethod(o),
  "label-read (chat)": (o) => new LabelReadMethod({ ...o, api: "chat" }),
};

describe("current: a state over the context", () => {
  it("is skipped in exactly one request (the /tokenize that refuses it) by every method", async () => {
    for (const [name, make] of Object.entries(makers)) {
      const engine = await startSimEngine({ model: "tiny", vllm: "current", maxModelLen: 96 });
      try {
        const method = make({ baseUrl: engine.url, retry: { minBackoffMs: 1, maxBackoffMs: 5 } });
        await method.info();
        const questions = {
          label: { type: "choice" as const, instructions: "Which?", criteria: { a: "one", b: "two", c: "three" } },
          flag: { type: "noul" as const, instructions: "Is it?", criteria: {} },
        };
        // A record that fits first: label-read tokenizes its labels once per model, not per record.
        const fits = await method.answer({ recordKey: "t:r0", id: "r0", state: { text: "short" }, questions, payloadSha256: "x" }, new AbortController().signal);
        expect(fits.errors, name).toEqual({});
        const before = engine.stats();
        const out = await method.answer({ recordKey: "t:r1", id: "r1", state: { text: "lorem ipsum dolor sit amet ".repeat(40) }, questions, payloadSha256: "x" }, new AbortController().signal);
        const after = engine.stats();
        expect(out.errors, name).toEqual({});
        expect(out.skipped.sort(), name).toEqual(["flag", "label"]);
        expect(out.usage.requests, name).toBe(1);
        expect(after.tokenizeRequests - before.tokenizeRequests, name).toBe(1);
        expect(after.requests - before.requests, name).toBe(0);
      } finally {
        await engine.close();
      }
    }
  });
});
