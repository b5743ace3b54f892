// Buffers for encoded WorkUnits, lent and given back. A unit is hundreds of KB; a fresh buffer per
// unit is memory outside the V8 heap that V8 counts against the coordinator thread's heap limit
// until a full mark-compact frees it (Heap::OldGenerationSpaceAvailable adds the external memory
// allocated since the last one), so at full speed the units' buffers alone started a mark-compact
// of the whole suite index every ~150 ms. A buffer goes back to the pool when the stream's write
// of its unit has called back: gRPC has framed (copied) it by then, or will never send it.

/** Capacity granularity: a buffer serves any unit within 64 KB below its size. */
const GRAIN = 64 * 1024;

export class UnitBufferPool {
  /** Free buffers, smallest first. */
  private readonly free: Buffer[] = [];
  private freeBytes = 0;
  /** Lent and not given back (for tests and the pool's own accounting). */
  lent = 0;

  /** `maxFreeBytes`: free buffers kept at most (more are left to the GC). */
  constructor(private readonly maxFreeBytes = 32 * 1024 * 1024) {}

  /** A buffer of exactly `size` bytes (a view of a pooled one); give it back with give(). */
  lend(size: number): Buffer {
    this.lent++;
    const i = this.free.findIndex((b) => b.length >= size);
    if (i >= 0) {
      const buf = this.free[i]!;
      this.free.splice(i, 1);
      this.freeBytes -= buf.length;
      return buf.subarray(0, size);
    }
    return Buffer.allocUnsafeSlow(Math.max(GRAIN, Math.ceil(size / GRAIN) * GRAIN)).subarray(0, size);
  }

  /** Takes back a buffer lent by lend(); its bytes may be overwritten from now on. */
  give(view: Buffer): void {
    this.lent--;
    const whole = Buffer.from(view.buffer, 0, view.buffer.byteLength);
    if (this.freeBytes + whole.length > this.maxFreeBytes) return;
    let i = 0;
    while (i < this.free.length && this.free[i]!.length < whole.length) i++;
    this.free.splice(i, 0, whole);
    this.freeBytes += whole.length;
  }

  get freeCount(): number {
    return this.free.length;
  }
}
