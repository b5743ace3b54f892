// Streaming reader for JSON Lines, gzip or plain, in constant memory. Errors name file and line.
import { createReadStream } from "node:fs";
import { createGunzip } from "node:zlib";
import { isAscii, isUtf8 } from "node:buffer";
import type { Readable } from "node:stream";
import { FormatError } from "./errors.js";
import { SMALL_BUFFER_BYTES } from "./small-buffer.js";

export interface JsonLine {
  /** 1-based line number in the decompressed file. */
  line: number;
  value: unknown;
  /** Length of the line in bytes, newline excluded. */
  bytes: number;
  /** The line's bytes (CR and newline excluded), with ReadOptions.raw. Valid for as long as it is held. */
  raw?: Buffer;
  /** With ReadOptions.byteStrings: true when every string in `value` is a byte string (see there). */
  byteStrings?: boolean;
  /** With ReadOptions.scan: true when `value` is what the scan read from the line's bytes, not parsed JSON. */
  scanned?: boolean;
}

export interface ReadOptions {
  /** Called with every decompressed chunk, in order (hashing). */
  onBytes?: (chunk: Buffer) => void;
  /** Accept a last line that is cut off (no newline and not valid JSON) by reporting it instead of throwing. */
  onTornLastLine?: (line: number, byteOffset: number) => void;
  /** When given, a line that is not valid JSON is reported here and skipped instead of ending the read. */
  onBadLine?: (error: FormatError) => void;
  /** Also yield each line's bytes (JsonLine.raw), for callers that pass parts of a line on as they are. */
  raw?: boolean;
  /**
   * A line that holds non-ASCII UTF-8 and no \u escape may be parsed from its bytes as Latin-1: every
   * string in its value is then a byte string (one character per UTF-8 byte; decoded exactly by
   * `Buffer.from(s, "latin1").toString("utf8")`) and JsonLine.byteStrings is true. Parsing skips
   * decoding the UTF-8, which is half the cost of reading a line of Vietnamese text. Which lines
   * parse, and their structure, are those of the exact parse; any other line is parsed exactly.
   */
  byteStrings?: boolean;
  /**
   * Reads a line from its bytes (CR and newline excluded) instead of parsing it: what it returns is
   * yielded as the line's value, with JsonLine.scanned; undefined leaves the line to the parse. For
   * callers that need a few facts of each line and can tell them exactly without building it. An
   * empty line is skipped before it; a torn last line is always parsed.
   */
  scan?: (bytes: Buffer, start: number, end: number) => unknown;
  /** Filled in while reading: proof that memory is bounded by the longest line, not the file. */
  stats?: ReaderStats;
}

export interface ReaderStats {
  /** Largest number of bytes the reader held at once (unfinished line + one decompressed chunk). */
  maxBufferedBytes: number;
  /** Bytes copied to join lines that spanned chunks: at most the input once (a long line is not re-copied per chunk). */
  copiedBytes?: number;
}

const NEWLINE = 0x0a;

/** Yields every non-blank line of a `.jsonl` or `.jsonl.gz` file as parsed JSON. */
export async function* readJsonLines(file: string, options: ReadOptions = {}): AsyncGenerator<JsonLine> {
  const raw = createReadStream(file, { highWaterMark: SMALL_BUFFER_BYTES });
  const stream: Readable = file.endsWith(".gz") ? raw.pipe(createGunzip({ chunkSize: 1 << 16 })) : raw;
  if (stream !== raw) raw.on("error", (e) => stream.destroy(e));
  yield* readJsonLinesFrom(stream as AsyncIterable<Buffer>, file, options);
}

/**
 * The reader over any stream of decompressed chunks; `file` names the source in errors. How the
 * bytes are split into chunks never changes the lines or the error (test/common/jsonl-reader.property.test.ts).
 * An unfinished line is kept as a list of chunks and joined once, when its newline arrives, so a
 * long line costs linear time, not a copy per chunk.
 */
export async function* readJsonLinesFrom(chunks: AsyncIterable<Buffer>, file: string, options: ReadOptions = {}): AsyncGenerator<JsonLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  let offset = 0; // decompressed byte offset of the start of the unfinished line
  try {
    for await (const chunk of chunks) {
      options.onBytes?.(chunk);
      if (options.stats && pendingBytes + chunk.length > options.stats.maxBufferedBytes) options.stats.maxBufferedBytes = pendingBytes + chunk.length;
      let nl = chunk.indexOf(NEWLINE);
      if (nl === -1) {
        if (chunk.length > 0) {
          pending.push(chunk);
          pendingBytes += chunk.length;
        }
        continue;
      }
      let start = 0;
      if (pendingBytes > 0) {
        pending.push(chunk.subarray(0, nl));
        const joined = Buffer.concat(pending, pendingBytes + nl);
        if (options.stats) options.stats.copiedBytes = (options.stats.copiedBytes ?? 0) + joined.length;
        pending = [];
        pendingBytes = 0;
        line++;
        const parsed = parseOrReport(file, line, joined, 0, joined.length, options);
        if (parsed) yield parsed;
        offset += joined.length + 1;
        start = nl + 1;
        nl = chunk.indexOf(NEWLINE, start);
      }
      for (; nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
        line++;
        const parsed = parseOrReport(file, line, chunk, start, nl, options);
        if (parsed) yield parsed;
        offset += nl + 1 - start;
        start = nl + 1;
      }
      if (start < chunk.length) {
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
      }
    }
  } catch (err) {
    if (err instanceof FormatError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EACCES" || code === "EISDIR") {
      throw new FormatError(file, undefined, undefined, `cannot read (${code})`, { cause: err });
    }
    throw new FormatError(
      file,
      line + 1,
      undefined,
      `corrupted gzip after line ${line}: ${(err as Error).message}${code ? ` (${code})` : ""}`,
      { cause: err },
    );
  }
  if (pendingBytes > 0) {
    const carry = Buffer.concat(pending, pendingBytes);
    if (options.stats) options.stats.copiedBytes = (options.stats.copiedBytes ?? 0) + carry.length;
    line++;
    let parsed: JsonLine | undefined;
    try {
      parsed = parseLine(file, line, carry, 0, carry.length, options.raw === true);
    } catch (err) {
      if (options.onTornLastLine) {
        options.onTornLastLine(line, offset);
        return;
      }
      throw new FormatError(file, line, undefined, "torn last line: no newline and not valid JSON (file cut off?)", {
        cause: err,
      });
    }
    if (parsed) yield parsed;
  }
}

function parseOrReport(
  file: string,
  line: number,
  buf: Buffer,
  start: number,
  end: number,
  options: ReadOptions,
): JsonLine | undefined {
  const onBadLine = options.onBadLine;
  const raw = options.raw === true;
  if (options.scan) {
    const e = end > start && buf[end - 1] === 0x0d ? end - 1 : end;
    if (e === start) return undefined;
    const value = options.scan(buf, start, e);
    if (value !== undefined) return raw ? { line, value, bytes: e - start, raw: buf.subarray(start, e), scanned: true } : { line, value, bytes: e - start, scanned: true };
  }
  if (options.byteStrings) {
    const parsed = parseBytes(line, buf, start, end, raw);
    if (parsed) return parsed;
  }
  if (!onBadLine) return parseLine(file, line, buf, start, end, raw);
  try {
    return parseLine(file, line, buf, start, end, raw);
  } catch (err) {
    if (!(err instanceof FormatError)) throw err;
    onBadLine(err);
    return undefined;
  }
}

/**
 * ReadOptions.byteStrings' parse, or undefined for the exact parse to decide (and name the error).
 * Latin-1 maps each byte to one character, so JSON's structure (all ASCII) is the same in both
 * decodings and non-ASCII bytes occur only inside strings, as in valid UTF-8; a \u escape would mix
 * decoded characters into the bytes, so such a line is left to the exact parse.
 */
function parseBytes(line: number, buf: Buffer, start: number, end: number, raw: boolean): JsonLine | undefined {
  let e = end;
  if (e > start && buf[e - 1] === 0x0d) e--;
  if (e === start) return undefined;
  const bytes = buf.subarray(start, e);
  const ascii = isAscii(bytes);
  if (!ascii && !isUtf8(bytes)) return undefined;
  const text = buf.toString("latin1", start, e);
  if (!ascii && text.includes("\\u")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // An ASCII line's Latin-1 text is its UTF-8 text: its strings are exact.
  const byteStrings = !ascii;
  return raw ? { line, value, bytes: e - start, raw: bytes, byteStrings } : { line, value, bytes: e - start, byteStrings };
}

function parseLine(file: string, line: number, buf: Buffer, start: number, end: number, raw: boolean): JsonLine | undefined {
  let e = end;
  if (e > start && buf[e - 1] === 0x0d) e--; // CRLF
  if (e === start) return undefined;
  const text = buf.toString("utf8", start, e);
  if (text.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return raw ? { line, value, bytes: e - start, raw: buf.subarray(start, e) } : { line, value, bytes: e - start };
  } catch (err) {
    throw new FormatError(file, line, undefined, `bad JSON: ${(err as Error).message}`, { cause: err });
  }
}
