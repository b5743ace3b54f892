// Worker threads' front door: the one host of a worker thread and the rule for when threads are used.
export { ThreadHost, threadEntry, threadsUsable, type ThreadFailure, type ThreadHostOptions } from "./thread-host.js";
export { announceThread, THREAD_LOG_ENV } from "./thread-names.js";
