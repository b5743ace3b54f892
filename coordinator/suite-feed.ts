// Work before the suite is read (issue 26): the coordinator serves as soon as the first selected
// track's file is verified, and hands each further track to the run as its file is read whole and
// checked against manifest.json (rows, groups, sha256), after scanning that track's committed
// results. No record of a track is sent, or committed, before its file is verified. A file that
// fails verification later ends the run failed with the suite's error; what earlier, verified
// tracks committed stays (it is correct, and a restart with the file repaired resumes from it).
import type { Logger } from "../common/log.js";
import type { GoldMessage } from "../common/suite/index.js";
import type { CoordinatorRun } from "./coordinator-run.js";
import type { ResolvedCoordinatorOptions } from "./coordinator-options.js";
import type { ResultsStore } from "./results-store.js";
import { defaultSpillPath, readSuite, type SuiteIndex, type SuiteReading, type TrackIndex } from "./suite-index.js";

export class SuiteFeed {
  private readonly reading: SuiteReading;
  /** Tracks verified and not yet handed to the run, with where their payloads end in the spill. */
  private readonly arrived: Array<{ track: TrackIndex; spillEnd: number }> = [];
  private wake: (() => void) | undefined;
  /** The gold feed's last message waits until every track is in the run (its totals are then whole). */
  private goldEnd: GoldMessage | undefined;
  private handedOver = false;

  constructor(
    private readonly options: ResolvedCoordinatorOptions,
    private readonly log: Logger,
  ) {
    const onGold = options.onGold;
    this.reading = readSuite({
      suiteDir: options.suiteDir,
      tracks: options.tracks,
      families: options.families,
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
      spillPath: defaultSpillPath(options.outDir),
      logger: log,
      ...(onGold ? { onGold: (m: GoldMessage) => (m.kind === "end" && this.incremental ? (this.goldEnd = m) : onGold(m)) } : {}),
      onTrack: (track, spillEnd) => {
        this.arrived.push({ track, spillEnd });
        this.wake?.();
      },
      ...(options.beforeTrackRead ? { beforeRead: options.beforeTrackRead } : {}),
    });
    this.reading.read.then(
      () => this.settle(undefined),
      (err: unknown) => this.settle(err ?? new Error("reading the suite failed")),
    );
  }

  private readSettled = false;
  private readFailure: unknown;

  private settle(err: unknown): void {
    this.readSettled = true;
    this.readFailure = err;
    this.wake?.();
  }

  private waitForNews(): Promise<void> {
    return new Promise<void>((r) => (this.wake = r));
  }

  /**
   * Whether the run may start before the whole suite is read: when manifest.json declares its
   * identity. A --limit run too: a track's kept records (whole groups) are known once its own file
   * is read, which is when its units go out; until then its count is an estimate (selectedTracks),
   * and the run cannot complete before every track is in.
   */
  get incremental(): boolean {
    return this.reading.declaredIdentity !== undefined;
  }

  get index(): SuiteIndex {
    return this.reading.index;
  }

  /** The suite identity run.json is checked against: the declared one (confirmed by the read), else the one read. */
  get identity(): string {
    return this.reading.declaredIdentity ?? this.reading.index.identity;
  }

  /** With the records manifest.json says each holds (0 where it does not say; at most --limit, an estimate corrected as each track is read). */
  get selectedTracks(): ReadonlyArray<{ track: string; family: string; records: number }> {
    return this.reading.selectedTracks;
  }

  /**
   * Resolves once the first selected track is verified (or the whole suite, without a manifest, or
   * when nothing is selected); throws the suite's error when it fails before that, so a broken
   * first file refuses the start as before and leaves no run.json behind.
   */
  async firstVerified(): Promise<void> {
    if (!this.incremental) {
      await this.reading.read;
      return;
    }
    while (this.arrived.length === 0 && !this.readSettled) await this.waitForNews();
    if (this.arrived.length === 0 && this.readFailure !== undefined) throw this.readFailure;
  }

  /**
   * Hands the run every track as it is verified, then says the suite is whole; a failure of the
   * suite ends the run. Resolves once the first track is in the run (its units handed out).
   */
  async feed(run: CoordinatorRun, store: ResultsStore): Promise<void> {
    this.handedOver = true;
    let ended = false;
    void run.done.then(() => {
      ended = true;
      this.reading.stop();
    });
    if (!this.incremental) return;
    let first!: () => void;
    const firstIn = new Promise<void>((r) => (first = r));
    void this.pump(run, store, first)
      .catch((err: unknown) => {
        // A run that is stopping stops the read too (its spill is gone): that is no failure.
        if (!ended && run.state() === "running") run.fail(err as Error);
      })
      .finally(first);
    await firstIn;
  }

  private async pump(run: CoordinatorRun, store: ResultsStore, firstIn: () => void): Promise<void> {
    for (;;) {
      const next = this.arrived.shift();
      if (next) {
        await store.scanTrack(next.track.family, next.track.track);
        this.options.onGold?.({ kind: "resultsScanned", track: next.track.track, family: next.track.family });
        // Its payloads may still be being written behind; later tracks' writes need not end first.
        await this.index.spill.writtenUpTo(next.spillEnd);
        run.addTrack(next.track);
        firstIn();
        continue;
      }
      if (this.readSettled) break;
      await this.waitForNews();
    }
    if (this.readFailure !== undefined) {
      // The failing file's tracks were never placed: none of their records went out or was committed.
      this.log.error("a suite file failed verification while the run was serving; no record of it was sent", { error: (this.readFailure as Error).message });
      throw this.readFailure;
    }
    await store.scanRest();
    run.allTracksAdded();
    if (this.goldEnd) this.options.onGold?.(this.goldEnd);
  }

  /** A start that failed: the spill goes (a started run disposes it itself when it stops). */
  dispose(): void {
    this.reading.stop();
    if (!this.handedOver) this.reading.index.spill.dispose();
  }
}
