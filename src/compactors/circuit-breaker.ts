/**
 * A circuit breaker for a summary model: after `failures` failed summaries
 * in a row it opens, and for `coolDownMs` the stage does not call the model
 * at all (the next stage of a pipeline does the work, at no model cost and
 * no wait). After the cool-down one call is let through: a success closes
 * the breaker, a failure opens it for another cool-down.
 *
 * One breaker per stage instance, shared by every conversation the stage
 * compacts: an outage or a quota is the model's, not a conversation's.
 */
export class CircuitBreaker {
  private consecutive = 0;
  private openUntil = 0;

  constructor(
    readonly failures: number,
    readonly coolDownMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a call may be made now. */
  allows(): boolean {
    return this.consecutive < this.failures || this.now() >= this.openUntil;
  }

  /** When the breaker closes again, in ms since the epoch (0 when it is closed). */
  get reopensAt(): number {
    return this.consecutive < this.failures ? 0 : this.openUntil;
  }

  succeeded(): void {
    this.consecutive = 0;
    this.openUntil = 0;
  }

  failed(): void {
    this.consecutive += 1;
    if (this.consecutive >= this.failures) this.openUntil = this.now() + this.coolDownMs;
  }
}
