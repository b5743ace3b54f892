// The results format's front door: a results line's schema, rules and writer, paths, the run's
// results files and their seal, and the append-only log.
export { AppendLog, type TornLine } from "./append-log.js";
export { AnsweredByList, answeredByRecord, type AnsweredBy } from "./answered-by.js";
export { isCommittedLine, scoredPart, scoredText, type CommittedLine } from "./committed-line.js";
export { NOUL_KEYS, RESULT_FORMAT, ResultLineSchema, SUM_TOLERANCE, acceptedResultLine, compactDistributionProblem, distributionProblem, givenUpResultLine, lineHasErrors, type Distribution, type ResultInput, type ResultLine, type StoredResultLine } from "./format.js";
export { parseResultLine } from "./parse.js";
export { readScoredPart } from "./scored-part-reader.js";
export { scanResultRow, type RowFacts } from "./row-scan.js";
export { MAX_RESULTS_FILE_BYTES, hashResultsFile, relativeKey, resultFiles } from "./files.js";
export { ResultsSealer, sealResults, type ResultsSeal } from "./seal.js";
export { trackFilesUnder, trackOfRunId, trackResultsPath } from "./paths.js";
export { writeResultLine, type CompactProbs, type LineQuestions, type LineRecordHead, type ResultAnswer } from "./line-writer.js";
