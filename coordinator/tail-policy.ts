// When the scheduler holds work back and how big a piece it hands out, so agents of uneven speed
// finish together (issue 9): an agent is given more only while what it holds would take it less
// than a horizon, and a unit is cut into a piece it can do within a smaller share of the time left.
// Both shrink with the time the run has left at the pace of every ready agent together; neither
// applies before an agent's pace is known.

/** Share of the time left an agent may hold in work, and its floor in seconds. */
export const HORIZON_SHARE = 0.3;
export const MIN_HORIZON_S = 2;
/** Share of the time left one piece may take its agent, and its floor in seconds. */
export const PIECE_SHARE = 0.12;
export const MIN_PIECE_S = 0.5;
/** A unit is cut only when it is this much over the piece size (a small excess is not worth a cut). */
export const CUT_OVER = 1.5;
/** A backup copy is made only when its agent would finish it this much sooner than the holder. */
export const BACKUP_GAIN = 0.8;

/** Seconds of work an agent may hold, given the seconds the run has left. */
export function horizonS(remainingS: number): number {
  return Math.max(MIN_HORIZON_S, HORIZON_SHARE * remainingS);
}

/** Seconds one piece of a unit may take its agent, given the seconds the run has left. */
export function pieceS(remainingS: number): number {
  return Math.max(MIN_PIECE_S, PIECE_SHARE * remainingS);
}
