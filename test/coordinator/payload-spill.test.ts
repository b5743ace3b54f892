// The payload spill: every record's bytes read back as added, across the 4 MB blocks written behind,
// records larger than a block, and records added one by one or as a reader's block.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PayloadSpill, type SpillSlot } from "../../coordinator/payload-spill.js";

const root = mkdtempSync(join(tmpdir(), "udm-spill-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("PayloadSpill", () => {
  it("reads back every payload once its writes have settled", async () => {
    const spill = new PayloadSpill(join(root, "a", "spill.bin"));
    const added: Array<{ slot: SpillSlot; state: string; questions: string }> = [];
    for (let i = 0; i < 3000; i++) {
      const state = JSON.stringify({ text: `bản ghi ${i} ${"x".repeat((i * 7919) % 9000)}` });
      const questions = JSON.stringify({ q: { type: "noul", instructions: `${i}`, criteria: {} } });
      if (i % 2 === 0) added.push({ slot: spill.add(state, questions), state, questions });
      else {
        // A block as a reader thread hands it on: junk, then this record's payload.
        const junk = Buffer.from("x".repeat(i % 13));
        const block = Buffer.concat([junk, Buffer.from(state), Buffer.from(questions)]);
        const base = spill.appendBlock(block);
        added.push({ slot: { offset: base + junk.length, stateBytes: Buffer.byteLength(state), questionsBytes: Buffer.byteLength(questions) }, state, questions });
      }
      if (i === 1500) {
        // One record larger than a block.
        const state = JSON.stringify({ text: "y".repeat(5 << 20) });
        added.push({ slot: spill.add(state, "{}"), state, questions: "{}" });
      }
    }
    expect(spill.bytes).toBeGreaterThan(12 << 20);
    await spill.settled();
    for (const a of added) expect(spill.read(a.slot)).toEqual({ stateJson: a.state, questionsJson: a.questions });
    spill.dispose();
    expect(existsSync(join(root, "a", "spill.bin"))).toBe(false);
  });

  it("has no name on disk while in use (a killed coordinator leaves none behind)", async () => {
    const path = join(root, "c", "spill.bin");
    const spill = new PayloadSpill(path);
    const slot = spill.add(JSON.stringify({ s: "state" }), JSON.stringify({ q: {} }));
    expect(existsSync(path)).toBe(false);
    await spill.settled();
    expect(spill.read(slot)).toEqual({ stateJson: JSON.stringify({ s: "state" }), questionsJson: JSON.stringify({ q: {} }) });
    spill.dispose();
    expect(existsSync(join(root, "c"))).toBe(false);
  });

  it("refuses to read while blocks are still being written, and disposes safely then", () => {
    const spill = new PayloadSpill(join(root, "b", "spill.bin"));
    let slot: SpillSlot | undefined;
    for (let i = 0; i < 200; i++) slot = spill.add(JSON.stringify({ t: "z".repeat(50_000) }), "{}");
    expect(() => spill.read(slot!)).toThrow(/read before its writes settled/);
    spill.dispose();
    expect(existsSync(join(root, "b", "spill.bin"))).toBe(false);
  });
});
