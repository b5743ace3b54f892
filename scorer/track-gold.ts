// The gold side of one track, read from the suite into a sealed TrackAccumulator. The file is
// checked as it is read (suite-check.ts: gold against options, counts and hash against the
// manifest): a suite that `suite verify` refuses is never scored.
import { readCheckedTrack, type Suite, type TrackFile } from "../common/suite/index.js";
import { TrackAccumulator } from "./track-accumulator.js";

export async function loadTrackGold(suite: Suite, file: TrackFile): Promise<{ accumulator: TrackAccumulator; sha256: string }> {
  const accumulator = new TrackAccumulator(file.track, file.family);
  let sha: string | undefined;
  for await (const record of readCheckedTrack(suite, file, (h) => (sha = h))) accumulator.addRecord(record, { file: file.path, line: record.line });
  accumulator.sealRecords();
  return { accumulator, sha256: sha! };
}
