// The streaming scorer's checkpoint: every result line it applied, in one append log
// (common/results/append-log.ts) fsynced before the line is acked on the bus. A restarted scorer
// replays the journal into its accumulators, so nothing acked is lost and redelivered lines are
// recognised by run_id. The file is a results file like the coordinator's, so
// `udm-orch score --results <out>` reads it too.
import { AppendLog, type ResultInput, parseResultLine } from "../common/results/index.js";
import type { Logger } from "../common/log.js";

/**
 * Opens the journal, first calling `onLine` for every line already in it (in order). A torn last
 * line (a crash mid-write; that line was never acked) is cut off.
 */
export async function openAppliedJournal(path: string, onLine: (line: ResultInput) => void, log: Logger): Promise<AppendLog> {
  const { log: journal, torn } = await AppendLog.open(path, { create: true, onLine: (value, line) => onLine(parseResultLine(path, line, value)) });
  if (torn) log.warn("journal: torn last line cut off (the scorer died mid-write; the line was not acked and comes again)", { file: path, line: torn.line });
  return journal;
}
