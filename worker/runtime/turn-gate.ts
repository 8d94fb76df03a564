/**
 * Lets at most `perTurn` callers through per turn of the event loop. When thousands of step
 * jobs start at once (10,000 runs arriving together), each start's synchronous work — its model request
 * through the openai SDK and undici, its scripts — would otherwise run back to back in one stretch of
 * microtasks and hold the event loop for seconds: timers (lock renewal, heartbeats) and I/O wait behind
 * it. Through the gate, the starts are spread over many turns with timers and I/O between them; the
 * total work is the same.
 */
export class TurnGate {
  private readonly waiting: (() => void)[] = [];
  private passedThisTurn = 0;
  private turnScheduled = false;
  /** Callers that have come to the gate since it was made: what a look for an idle process compares. */
  private callers = 0;

  constructor(private readonly perTurn: number) {}

  pass(): Promise<void> | undefined {
    this.callers += 1;
    if (this.waiting.length === 0 && this.passedThisTurn < this.perTurn) {
      this.passedThisTurn += 1;
      this.scheduleTurn();
      return undefined;
    }
    const passing = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.scheduleTurn();
    return passing;
  }

  /** Runs `work` once the gate lets it through (at once while the turn has room). */
  async through<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.pass();
    if (turn) await turn;
    return work();
  }

  /** Callers that came to the gate so far (each step start, intake job and model request of the process). */
  get arrivals(): number {
    return this.callers;
  }

  /** Waiting callers. */
  get queued(): number {
    return this.waiting.length;
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    // setImmediate runs after this turn's I/O: the next batch goes once timers and I/O had their turn.
    setImmediate(() => {
      this.turnScheduled = false;
      this.passedThisTurn = 0;
      for (const resolve of this.waiting.splice(0, this.perTurn)) {
        this.passedThisTurn += 1;
        resolve();
      }
      if (this.waiting.length > 0 || this.passedThisTurn > 0) this.scheduleTurn();
    });
  }
}
