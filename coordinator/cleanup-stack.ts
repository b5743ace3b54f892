// Undo steps of a start that may fail half-way: each resource acquired pushes how to release it;
// a failure unwinds them in reverse order, and a start that succeeds hands them to the shutdown.

export class CleanupStack {
  private readonly steps: Array<() => unknown> = [];

  push(step: () => unknown): void {
    this.steps.push(step);
  }

  /** Runs every step, newest first; a step that throws does not stop the others. */
  async unwind(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch {
        // The start already failed with its own error, which is the one reported.
      }
    }
  }
}
