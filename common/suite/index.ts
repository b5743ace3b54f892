// The suite format's front door: schemas, the checked reader, the manifest and the suite's identity.
export { goldLine, goldRecordsOf, goldTransferList, GoldLines, GOLD_CHUNK_BYTES, type GoldMessage } from "./gold-feed.js";
export { QuestionSchema, type Question, type SuiteRecord, type ScoredRecord, type ScoredChunk } from "./schema.js";
export { openCheckedSuite, readCheckedTrack } from "./suite-check.js";
export { decompressedSha256, manifestHashProblem, openSuite, readTrackRecords, selectFiles, suiteIdentity, type Suite, type TrackFile, type TrackFilter } from "./suite.js";
export { verifySuite } from "./verify.js";
export { limitRecords } from "./record-limit.js";
export { withExactTexts, type TextsAsBytes } from "./record-texts.js";
export { derivedDocument } from "./question-document.js";
