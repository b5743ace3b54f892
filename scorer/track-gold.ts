// The gold side of one track, read from the suite into a sealed TrackAccumulator. The file is
// checked against manifest.json as it is read: a suite that does not match is never scored.
import { FormatError } from "../common/errors.js";
import { manifestHashProblem, readTrackRecords, type Suite, type TrackFile } from "../common/suite/suite.js";
import { TrackAccumulator } from "./track-accumulator.js";

export async function loadTrackGold(suite: Suite, file: TrackFile): Promise<{ accumulator: TrackAccumulator; sha256: string }> {
  const accumulator = new TrackAccumulator(file.track, file.family);
  let sha: string | undefined;
  for await (const record of readTrackRecords(file, { onHash: (h) => (sha = h) })) accumulator.addRecord(record, { file: file.path, line: record.line });
  const problem = manifestHashProblem(suite, file, sha!);
  if (problem) throw new FormatError(file.path, undefined, undefined, `refusing to score a suite that does not match its manifest: ${problem}`);
  accumulator.sealRecords();
  return { accumulator, sha256: sha! };
}
