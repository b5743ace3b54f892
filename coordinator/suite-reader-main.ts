// Entry of a reader thread of the coordinator's start (suite-readers.ts): takes suite files one at
// a time, in the order they come, reads each in one pass (track-reader.ts) or only hashes it (a
// file outside the selected tracks), and posts back its payload blocks (transferred, not copied),
// its records, its gold and its hash, or the error that names file and line.
import { parentPort, workerData } from "node:worker_threads";
import { announceThread } from "../common/threads/index.js";
import { decompressedSha256, goldTransferList, openSuite } from "../common/suite/index.js";
import { encodeThreadError } from "../common/thread-error.js";
import { readTrackFile } from "./track-reader.js";
import type { ReaderStartData, ReaderTask, ReaderToIndex } from "./suite-readers.js";

announceThread("suite-reader");
const port = parentPort;
if (!port) throw new Error("suite-reader-main.ts must run in a worker thread");
const post = (msg: ReaderToIndex, transfer: ArrayBuffer[] = []) => port.postMessage(msg, transfer);

const { suiteDir } = workerData as ReaderStartData;
const suite = openSuite(suiteDir);
const byPath = new Map(suite.files.map((f) => [f.relPath, f]));

/** Tasks are read one after the other, in the order they came (a read started early posts several). */
let queue = Promise.resolve();
port.on("message", (task: ReaderTask) => {
  queue = queue.then(async () => {
    try {
      const file = byPath.get(task.relPath);
      if (!file) throw new Error(`reader thread: ${task.relPath} is not a file of ${suiteDir}`);
      if (!task.selected) {
        post({ type: "file", index: task.index, sha256: await decompressedSha256(file.path) });
        return;
      }
      const { sha256, gold } = await readTrackFile(suite, file, {
        gold: task.gold,
        onBlock: (block) => {
          // A block of its own (not a slice of a shared pool) moves to the index's thread without a copy.
          const bytes = block.bytes;
          const own = bytes.byteOffset === 0 && bytes.buffer.byteLength >= 64 << 10 ? bytes : Uint8Array.prototype.slice.call(bytes);
          post({ type: "block", index: task.index, bytes: own, entries: block.entries }, [own.buffer as ArrayBuffer]);
        },
      });
      // The gold's chunks move too: copied, a track's gold would be in both threads at once.
      post({ type: "file", index: task.index, sha256, ...(gold !== undefined ? { gold } : {}) }, goldTransferList(gold));
    } catch (err) {
      post({ type: "error", index: task.index, error: encodeThreadError(err) });
    }
  });
});
