// The view role's front door: looking at a run's answers (`udm-orch view`: a page served from the
// run's files) and comparing two runs record by record (`udm-orch diff`). What cli/ and bench/ may use.
export { openRunDir, checkSuiteIdentity, type RunDir } from "./run-dir.js";
export { diffRefusal, diffRuns, type RunDiff } from "./run-diff.js";
export { recordLink, renderDiffHtml, renderDiffJson, renderDiffMarkdown, significant, type ViewLinks } from "./diff-format.js";
export { startViewServer, VIEW_DEFAULTS, VIEW_DEFAULT_LISTEN, type ViewServer, type ViewServerOptions } from "./view-server.js";
export { markNeighbours } from "./leaderboard-neighbours.js";
