// The results store with its lines written in the results writer's thread (what `udm-orch
// coordinator` runs): the same files, byte for byte, as the store writes in its own thread; commits
// reported in order, with their texts only where asked; the scorer's feed given committed lines and
// the coordinator's other feed messages in order; a file that cannot be written, or a writer that
// dies, commits nothing it did not make durable. The thread's entry is the compiled one, so this runs
// after `npm run build` and is skipped before.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { AnsweredByList, type CommittedLine, type ResultAnswer } from "../../common/results/index.js";
import { LineWriterThread } from "../../coordinator/line-writer-thread.js";
import { RecordQuestions } from "../../coordinator/record-questions.js";
import { givenUpLine } from "../../coordinator/result-line.js";
import { ResultsStore, type CommitNotice } from "../../coordinator/results-store.js";
import { compactQuestions, OptionInterner, type RecordEntry } from "../../coordinator/suite-index.js";
import type { ScorerFeedMessage } from "../../scorer/index.js";

const entry = pathToFileURL(fileURLToPath(new URL("../../dist/coordinator/line-writer-main.js", import.meta.url)));
const built = existsSync(fileURLToPath(entry));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "udm-writer-"));
  dirs.push(d);
  return d;
};

const interner = new OptionInterner();
function record(track: string, n: number, questions = 3): RecordEntry {
  const specs = Array.from({ length: questions }, (_, i) => ({ key: i === 1 ? "7" : `q${i}`, options: ["A", "B", "C"] }));
  return { recordKey: `${track}:${n}`, id: `${n}`, groupId: "g", payloadSha256: "ab".repeat(32), offset: 0, stateBytes: 0, questionsBytes: 0, ...compactQuestions(specs, interner) } as RecordEntry;
}
function answer(r: RecordEntry, n: number): ResultAnswer {
  const keys = new RecordQuestions(r).keys as string[];
  return {
    compactProbs: { questions: keys, values: keys.flatMap((_, i) => [0.5, 0.25 + i / 1e9, 0.25 - i / 1e9]) },
    skipped: [],
    errors: n % 5 === 4 ? { q0: "engine: HTTP 500" } : {},
    latencyMs: 10 + n / 3,
    promptTokens: 100 + n,
    cachedTokens: n % 2 === 0 ? null : n,
    completionTokens: 3,
    answeredBy: AnsweredByList.of(keys, keys.map(() => "systemone"), true),
    retries: n % 3,
    approximate: n % 7 === 0,
  };
}

interface Opened {
  store: ResultsStore;
  notices: CommitNotice[];
  feed: ScorerFeedMessage[];
}

async function openStore(outDir: string, options: { thread: boolean; textsWanted?: boolean; batchLines?: number; scorer?: boolean }): Promise<Opened> {
  const notices: CommitNotice[] = [];
  const feed: ScorerFeedMessage[] = [];
  let scorerFeed: MessagePort | undefined;
  if (options.scorer) {
    const channel = new MessageChannel();
    channel.port2.on("message", (m: ScorerFeedMessage) => feed.push(m));
    channel.port2.unref();
    scorerFeed = channel.port1;
  }
  const writer = options.thread ? new LineWriterThread(entry, { outDir, textsWanted: options.textsWanted ?? false, ...(scorerFeed ? { scorerFeed } : {}) }) : undefined;
  const store = await ResultsStore.open({ outDir, batchLines: options.batchLines ?? 1000, flushMs: 60_000, onCommitted: (l) => notices.push({ ...l }), ...(writer ? { writer } : {}) });
  return { store, notices, feed };
}

/** The same lines appended: accepted answers over two tracks and families, and a given-up line. */
function appendAll(store: ResultsStore, count: number): void {
  for (let n = 0; n < count; n++) {
    const track = n % 3 === 0 ? "u" : "t";
    const r = record(track, n, 1 + (n % 4));
    const qs = RecordQuestions.of(r);
    store.appendAnswer(r, qs, answer(r, n), track, n % 2 === 0 ? "fam" : "fam2", `agent-${n % 2}`);
  }
  const given = record("t", count);
  store.append(givenUpLine(given, "t", "fam", "bad_distribution: sums to 2"));
}

function files(outDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ["fam/t.jsonl", "fam/u.jsonl", "fam2/t.jsonl", "fam2/u.jsonl"]) if (existsSync(join(outDir, f))) out[f] = readFileSync(join(outDir, f), "utf8");
  return out;
}

describe.skipIf(!built)("results store with a writer thread", () => {
  it("writes the files byte for byte as the store does in its own thread, and reports each commit once, in order, without its text unless asked", async () => {
    const here = tmp();
    const inThread = await openStore(here, { thread: false });
    appendAll(inThread.store, 60);
    await inThread.store.close();

    const there = tmp();
    const { store, notices } = await openStore(there, { thread: true, batchLines: 7 });
    appendAll(store, 60);
    expect(store.appendAnswer(record("t", 1), RecordQuestions.of(record("t", 1)), answer(record("t", 1), 1), "t", "fam2", "agent-1")).toBe(false);
    await store.flush();
    expect(store.committedCount).toBe(61);
    expect(store.isCommitted("u:0")).toBe(true);
    expect(store.erroredCount).toBe(inThread.store.erroredCount);
    expect(store.erroredCount).toBeGreaterThan(0);
    await store.close();

    expect(files(there)).toEqual(files(here));
    expect(Object.keys(files(there))).toHaveLength(4);
    // In the order appended (batches in turn), once each; the texts stay in the writer's thread.
    expect(notices.map((l) => l.recordKey)).toEqual([...Array.from({ length: 60 }, (_, n) => `${n % 3 === 0 ? "u" : "t"}:${n}`), "t:60"]);
    expect(notices.every((l) => l.text === undefined)).toBe(true);
    const inThreadByKey = new Map(inThread.notices.map((l) => [l.recordKey, l]));
    for (const l of notices) {
      const { text: _text, scoredLength: _length, ...rest } = inThreadByKey.get(l.recordKey)!;
      expect(l).toEqual(rest);
    }
  });

  it("with texts asked for, each commit carries its line's text and scored length as written", async () => {
    const out = tmp();
    const { store, notices } = await openStore(out, { thread: true, textsWanted: true, batchLines: 4 });
    appendAll(store, 12);
    await store.close();
    const written = Object.values(files(out)).flatMap((f) => f.trim().split("\n"));
    expect(notices).toHaveLength(13);
    expect(new Set(notices.map((l) => l.text))).toEqual(new Set(written));
    for (const l of notices as CommittedLine[]) {
      if (l.usage) expect(l.scoredLength).toBe(l.text.indexOf(`,"payload_sha256":`));
      else expect(l.scoredLength).toBeUndefined();
    }
  });

  it("feeds the scorer the committed lines, and passes other feed messages on after the lines sent before them", async () => {
    const out = tmp();
    const channel = new MessageChannel();
    const feed: ScorerFeedMessage[] = [];
    channel.port2.on("message", (m: ScorerFeedMessage) => feed.push(m));
    const writer = new LineWriterThread(entry, { outDir: out, textsWanted: false, scorerFeed: channel.port1 });
    const store = await ResultsStore.open({ outDir: out, batchLines: 5, flushMs: 60_000, writer });
    const closed = new Promise<void>((resolve) => channel.port2.once("close", resolve));
    appendAll(store, 9);
    void store.flush();
    writer.feed({ type: "end" });
    await store.close();
    // The writer closes the feed's end it holds when the store closes it.
    await closed;
    expect(feed.at(-1)).toEqual({ type: "end" });
    const lines = feed.flatMap((m) => (m.type === "committed" ? m.lines : []));
    const written = Object.values(files(out)).flatMap((f) => f.trim().split("\n"));
    expect(lines).toHaveLength(10);
    expect(new Set(lines)).toEqual(new Set(written));
    // Each line's scored part ends where payload_sha256 begins (a given-up line: -1, the whole).
    const lengths = feed.flatMap((m) => (m.type === "committed" ? m.scoredLengths : []));
    lines.forEach((text, i) => expect(lengths[i]).toBe(text.includes('"agent":""') ? -1 : text.indexOf(`,"payload_sha256":`)));
  });

  it("a track file that cannot be written commits none of its lines, the others' lines are committed, and the store refuses more", async () => {
    const out = tmp();
    // fam2 is a file, not a directory: its track files cannot be opened.
    writeFileSync(join(out, "fam2"), "");
    const failures: Error[] = [];
    const channel = new MessageChannel();
    const fed: string[] = [];
    channel.port2.on("message", (m: ScorerFeedMessage) => m.type === "committed" && fed.push(...m.lines));
    const closed = new Promise<void>((resolve) => channel.port2.once("close", resolve));
    const writer = new LineWriterThread(entry, { outDir: out, textsWanted: false, scorerFeed: channel.port1 });
    const notices: CommitNotice[] = [];
    const store = await ResultsStore.open({ outDir: out, batchLines: 1000, flushMs: 60_000, writer, onCommitted: (l) => notices.push(l), onError: (e) => failures.push(e) });
    appendAll(store, 6);
    await expect(store.flush()).rejects.toThrow(`cannot write results to ${join(out, "fam2")}`);
    expect(failures).toHaveLength(1);
    expect(notices.map((l) => l.family)).toEqual(["fam", "fam", "fam", "fam"]);
    expect(store.isCommitted("u:0")).toBe(true);
    expect(store.isCommitted("t:1")).toBe(false);
    expect(() => store.append(givenUpLine(record("t", 99), "t", "fam", "x"))).toThrow(/cannot write results/);
    await store.close().catch(() => undefined);
    await closed;
    // The scorer is given the lines that were made durable, and only those.
    expect(fed.map((t) => (JSON.parse(t) as { family: string }).family)).toEqual(["fam", "fam", "fam", "fam"]);
    expect(readFileSync(join(out, "fam", "u.jsonl"), "utf8").trim().split("\n")).toHaveLength(1);
    expect(readFileSync(join(out, "fam", "t.jsonl"), "utf8").trim().split("\n")).toHaveLength(3);
  });

  it("a writer thread that fails fails the store: nothing it had is counted, and the error says so", async () => {
    const out = tmp();
    const writer = new LineWriterThread(entry, { outDir: out, textsWanted: false });
    // A batch the thread cannot read: it reports the error and takes nothing more.
    const bogus = { count: 1, ints: new Int32Array([9, 0, 0]), intCount: 3, numbers: new Float64Array(0), numberCount: 0, strings: [], newStrings: ["t"], newLists: [] };
    await expect(writer.write(bogus, [])).rejects.toThrow("results writer failed: line batch: unknown entry kind 9 at line 0");
    const failures: Error[] = [];
    const store = await ResultsStore.open({ outDir: out, batchLines: 1000, flushMs: 60_000, writer, onError: (e) => failures.push(e) });
    appendAll(store, 3);
    await expect(store.flush()).rejects.toThrow(/results writer failed/);
    expect(failures).toHaveLength(1);
    expect(store.committedCount).toBe(0);
    expect(store.has("u:0")).toBe(false);
    expect(() => appendAll(store, 1)).toThrow(/results writer failed/);
    await store.close().catch(() => undefined);
    expect(files(out)).toEqual({});
  });

  it("resumes on the files a crash left: a torn last line is cut off at open, then the writer appends after the last whole line", async () => {
    const out = tmp();
    const first = await openStore(out, { thread: true });
    appendAll(first.store, 4);
    await first.store.close();
    const file = join(out, "fam", "u.jsonl");
    const whole = readFileSync(file, "utf8");
    writeFileSync(file, whole + '{"run_id":"u:99","id"');
    const again = await openStore(out, { thread: true });
    expect(again.store.repaired).toHaveLength(1);
    // The given-up line has errors: its record is redone by this start.
    expect(again.store.committedCount).toBe(4);
    expect(again.store.retrying).toBe(1);
    const r = record("u", 99);
    again.store.appendAnswer(r, RecordQuestions.of(r), answer(r, 99), "u", "fam", "agent-0");
    await again.store.close();
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines.slice(0, -1).join("\n") + "\n").toBe(whole);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ run_id: "u:99", family: "fam" });
  });
});
