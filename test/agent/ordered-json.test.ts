// A systemone request read by option order (an engine that ignores `seed`) lists each choice's
// options in the seed's order, also when the option keys look like integers (a JavaScript object
// would put those first, in ascending order; vLLM labels a dict's keys in the order received).
import { describe, expect, it } from "vitest";
import { JsonText } from "../../agent/engine-http.js";
import { OrderedObject, orderedJson } from "../../agent/methods/ordered-json.js";
import { optionsInSeedOrder } from "../../agent/methods/systemone.js";
import { labelPermutation } from "../../common/engine-protocol/index.js";

describe("orderedJson", () => {
  it("writes an OrderedObject's keys in its order, integer-like ones included, and everything else as JSON.stringify does", () => {
    const body = orderedJson({ a: 1, skip: undefined, q: new OrderedObject([["3", "c"], ["1", "a"], ["x", [1, "y", null]], ["2", { n: true }]]) });
    expect(body).toBeInstanceOf(JsonText);
    expect(body.text).toBe('{"a":1,"q":{"3":"c","1":"a","x":[1,"y",null],"2":{"n":true}}}');
    expect(JSON.parse(body.text)).toEqual({ a: 1, q: { "1": "a", "2": { n: true }, "3": "c", x: [1, "y", null] } });
  });

  it("optionsInSeedOrder puts option i at its label position under the seed", () => {
    const keys = ["1", "2", "3", "4", "5"];
    for (const seed of [0, 1, 2, 7]) {
      const order = optionsInSeedOrder(keys, seed);
      const positions = labelPermutation(seed, keys.length);
      keys.forEach((k, i) => expect(order.indexOf(k)).toBe(positions[i]));
    }
    expect(optionsInSeedOrder(keys, 0)).toEqual(keys);
    expect(optionsInSeedOrder(keys, 1)).not.toEqual(keys);
  });
});
