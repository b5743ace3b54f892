// Writes one track file: JSON lines -> gzip -> disk, hashing the decompressed bytes on the way.
// The same lines in the same order give byte-identical .gz output (no timestamps in the header).
import { createHash, type Hash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { finished } from "node:stream/promises";
import { createGzip, type Gzip } from "node:zlib";

const BATCH_CHARS = 256 * 1024;
// Lets generation run ahead of compression (which runs on the libuv thread pool) instead of taking turns.
const GZIP_QUEUE_BYTES = 8 * 1024 * 1024;

export interface WrittenFile {
  sha256: string;
  /** Decompressed bytes. */
  bytes: number;
  lines: number;
}

export class TrackFileWriter {
  private readonly gzip: Gzip;
  private readonly done: Promise<void>;
  private readonly hash: Hash = createHash("sha256");
  private pending: string[] = [];
  private pendingChars = 0;
  private bytes = 0;
  private lines = 0;

  constructor(path: string, level: number) {
    this.gzip = createGzip({ level });
    const out = createWriteStream(path);
    out.on("error", (err) => this.gzip.destroy(err));
    this.gzip.pipe(out);
    this.done = finished(out);
  }

  /** Appends one JSON line (the newline is added here). */
  async writeLine(json: string): Promise<void> {
    this.pending.push(json, "\n");
    this.pendingChars += json.length + 1;
    this.lines++;
    if (this.pendingChars >= BATCH_CHARS) await this.flush();
  }

  async close(): Promise<WrittenFile> {
    await this.flush();
    this.gzip.end();
    await this.done;
    return { sha256: this.hash.digest("hex"), bytes: this.bytes, lines: this.lines };
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const buf = Buffer.from(this.pending.join(""), "utf8");
    this.pending = [];
    this.pendingChars = 0;
    this.hash.update(buf);
    this.bytes += buf.length;
    this.gzip.write(buf);
    // write() asks for a drain after every batch (16 KiB mark); waiting only past GZIP_QUEUE_BYTES
    // keeps the compressor busy while the next batch is generated.
    if (this.gzip.writableLength > GZIP_QUEUE_BYTES) await once(this.gzip, "drain");
  }
}
