// The gold side of one track, read from the suite into a sealed TrackAccumulator. The file is
// checked as it is read (suite-check.ts: gold against options, counts and hash against the
// manifest): a suite that `suite verify` refuses is never scored.
import { limitRecords, readCheckedTrack, type Suite, type TrackFile } from "../common/suite/index.js";
import { TrackAccumulator } from "./track-accumulator.js";

/** `limit`: records per track at most, whole groups (`--limit`); the track is then read whole first. */
export async function loadTrackGold(suite: Suite, file: TrackFile, limit?: number): Promise<{ accumulator: TrackAccumulator; sha256: string }> {
  const accumulator = new TrackAccumulator(file.track, file.family);
  let sha: string | undefined;
  const records = readCheckedTrack(suite, file, (h) => (sha = h));
  if (limit !== undefined) {
    const all = [];
    for await (const record of records) all.push(record);
    for (const record of limitRecords(all, (r) => r.metadata.group_id, limit)) accumulator.addRecord(record, { file: file.path, line: record.line });
  } else for await (const record of records) accumulator.addRecord(record, { file: file.path, line: record.line });
  accumulator.sealRecords();
  return { accumulator, sha256: sha! };
}
