// The WorkUnit buffer pool: buffers are reused once given back, never while lent, and the free
// ones kept are bounded.
import { describe, expect, it } from "vitest";
import { UnitBufferPool } from "../../coordinator/transport/unit-buffer-pool.js";
import { EncodedUnit } from "../../coordinator/transport/work-unit-encoder.js";

describe("UnitBufferPool", () => {
  it("lends exactly the size asked for and reuses a buffer given back for a unit that fits", () => {
    const pool = new UnitBufferPool();
    const a = pool.lend(300_000);
    expect(a.length).toBe(300_000);
    const b = pool.lend(100_000);
    expect(b.buffer).not.toBe(a.buffer);
    pool.give(a);
    // Smaller than a's buffer: served from it.
    const c = pool.lend(250_000);
    expect(c.length).toBe(250_000);
    expect(c.buffer).toBe(a.buffer);
    // Larger than any free buffer: a new one.
    pool.give(c);
    const d = pool.lend(400_000);
    expect(d.buffer).not.toBe(a.buffer);
    expect(pool.freeCount).toBe(1);
    expect(pool.lent).toBe(2);
  });

  it("takes the smallest free buffer that fits", () => {
    const pool = new UnitBufferPool();
    const big = pool.lend(900_000);
    const small = pool.lend(200_000);
    pool.give(big);
    pool.give(small);
    expect(pool.lend(150_000).buffer).toBe(small.buffer);
    expect(pool.lend(150_000).buffer).toBe(big.buffer);
    expect(pool.freeCount).toBe(0);
  });

  it("keeps at most maxFreeBytes of free buffers", () => {
    const pool = new UnitBufferPool(1 << 20);
    const lent = Array.from({ length: 6 }, () => pool.lend(300_000));
    for (const b of lent) pool.give(b);
    // Each buffer is 320 KB (64 KB grains): three fit in 1 MB.
    expect(pool.freeCount).toBe(3);
    expect(pool.lent).toBe(0);
  });

  it("an encoded unit gives its buffer back once, however often it is told it was written", () => {
    const pool = new UnitBufferPool();
    const unit = new EncodedUnit(pool.lend(70_000), pool);
    unit.written();
    unit.written();
    expect(pool.freeCount).toBe(1);
    expect(pool.lent).toBe(0);
  });
});
