// The error codec between the coordinator's worker thread and its host: class, message, exit code
// and FormatError fields survive a structured clone.
import { describe, expect, it } from "vitest";
import { BusError } from "../../common/bus/bus.js";
import { CheckFailedError, FormatError, UdmError, UsageError } from "../../common/errors.js";
import { decodeThreadError, encodeThreadError } from "../../common/thread-error.js";

const across = (err: unknown) => decodeThreadError(structuredClone(encodeThreadError(err)));

describe("thread error codec", () => {
  it("keeps a FormatError's class, fields and message", () => {
    const err = across(new FormatError("/s/test/f/t.jsonl.gz", 7, "questions.q", "bad"));
    expect(err).toBeInstanceOf(FormatError);
    expect(err).toMatchObject({ file: "/s/test/f/t.jsonl.gz", line: 7, field: "questions.q", problem: "bad", exitCode: 2 });
    expect(err.message).toBe("/s/test/f/t.jsonl.gz:7 field questions.q: bad");
    expect(across(new FormatError("/x", undefined, undefined, "torn"))).toMatchObject({ line: undefined, field: undefined, message: "/x: torn" });
  });

  it.each([
    [new UsageError("bad flag"), UsageError, 2, "UsageError"],
    [new UdmError("disk full"), UdmError, 1, "UdmError"],
    [new BusError("nats down"), UdmError, 1, "BusError"],
    [new CheckFailedError(["p"]), UdmError, 1, "CheckFailedError"],
  ])("%s keeps its exit code and name", (input, cls, exitCode, name) => {
    const err = across(input);
    expect(err).toBeInstanceOf(cls);
    expect(err).toMatchObject({ exitCode, name, message: input.message });
  });

  it("a foreign error becomes a failure (exit 1) naming its class", () => {
    const err = across(new TypeError("x is not a function"));
    expect(err).toBeInstanceOf(UdmError);
    expect(err).toMatchObject({ exitCode: 1, message: "TypeError: x is not a function" });
    expect(across("a string")).toMatchObject({ exitCode: 1, message: "a string" });
  });
});
