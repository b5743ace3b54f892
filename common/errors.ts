// Typed errors. Every process maps them to an exit code (cli/program-base.ts exitCodeOf) or a gRPC status in one place.

/** Exit codes of the CLI contract: 0 ok, 1 failed check or run, 2 bad usage or input. */
export const EXIT = { ok: 0, failed: 1, badInput: 2 } as const;

export class UdmError extends Error {
  readonly exitCode: number = EXIT.failed;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad usage or bad input: exit 2. */
export class UsageError extends UdmError {
  override readonly exitCode = EXIT.badInput;
}

/** A file of the suite or of the results that cannot be read as specified. Names file, line and field. */
export class FormatError extends UdmError {
  override readonly exitCode = EXIT.badInput;
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly field: string | undefined,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}${line !== undefined ? `:${line}` : ""}${field ? ` field ${field}` : ""}: ${problem}`, options);
  }
}

/** A check that ran and found problems (suite verify, card verify): exit 1. */
export class CheckFailedError extends UdmError {
  constructor(readonly problems: string[]) {
    super(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}
