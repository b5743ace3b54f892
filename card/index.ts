// The run card's front door: building, sealing, verifying and comparing run cards; sweeps and the
// leaderboard. What cli/ may use of card/.
export type { CardSetup } from "./build-card.js";
export { previousCard, writeCard } from "./card-file.js";
export { sealCard } from "./card-hash.js";
export { CardRecorder } from "./card-recorder.js";
export { renderHtml } from "./leaderboard/leaderboard-html.js";
export { renderMarkdown } from "./leaderboard/leaderboard-markdown.js";
export { buildLeaderboard, type InvalidCard, type Leaderboard, type LeaderboardEntry, type NeighbourDifference } from "./leaderboard/leaderboard-rows.js";
export { rankingMean } from "./quality-tier.js";
export { REPRODUCE_TOLERANCE, compareHeadlines } from "./reproduce-compare.js";
export { reproduceSetupProblem } from "./reproduce-setup.js";
export { METHOD_CLASSES, RUN_CARD_FILE, type MethodClass, type RunCard } from "./run-card.js";
export { datasetSha256, expectedFingerprint, scopeOf } from "./sweep/expected-fingerprint.js";
export { scopeOfCard, type FingerprintScope } from "./fingerprint.js";
export { fingerprintDifferences } from "./fingerprint-diff.js";
export { MAX_SWEEP_RUNS, expandSweep, isListenAddress, readSweepConfig, type SweepConfig, type SweepRun } from "./sweep/sweep-config.js";
export { readRunConfig, type RunConfig } from "./sweep/run-config.js";
export { estimateRun, measureCharsPerToken, measureSuiteText, type TokenRatio } from "./sweep/sweep-estimate.js";
export { SWEEP_RECORD_FORMAT, entryFromCard, writeSweepRecord, type SweepRunEntry } from "./sweep/sweep-record.js";
export { verifyCard, type CardVerdict } from "./verify-card.js";
export { checkSignature, readSigningKey, readTrustedKeys, signCard, signatureTier, type SignatureCheck } from "./card-signature.js";
