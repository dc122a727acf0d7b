// The batch runner's queue in one process: a fair share for each user. At most `concurrency` batches run at once, at
// most `perUser` of them one user's, and a free slot goes to the waiting user served least recently (a user not
// served yet first; ties in the order they came), each user's own batches in the order sent. So one user's three
// large files never hold another user's file behind them: it starts at once when a slot is free, else when the
// first batch of another user ends. (A single FIFO made a 10-row file wait 118 s behind three files of one user.)

type Task = () => Promise<void>;

export class FairQueue {
  /** Waiting tasks per user, users in the order they came. */
  private readonly waiting = new Map<string, Task[]>();
  private readonly running = new Map<string, number>();
  /** When each user with something waiting or running was last given a slot (a counter, not a clock). */
  private readonly lastServed = new Map<string, number>();
  private turn = 0;
  private active = 0;
  private idle: Array<() => void> = [];

  constructor(private readonly opts: { concurrency: number; perUser: number }) {}

  /** Queues a task for the user; it runs when the rule above gives it a slot. A task's rejection is its own affair. */
  add(userId: string, task: Task): void {
    const queue = this.waiting.get(userId);
    if (queue) queue.push(task);
    else this.waiting.set(userId, [task]);
    this.pump();
  }

  /** Tasks waiting and running. */
  get size(): number {
    let n = this.active;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  /** Resolves once nothing waits or runs. */
  onIdle(): Promise<void> {
    return this.size === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  private next(): string | undefined {
    let best: string | undefined;
    let bestTurn = Infinity;
    for (const user of this.waiting.keys()) {
      if ((this.running.get(user) ?? 0) >= this.opts.perUser) continue;
      const served = this.lastServed.get(user) ?? -1;
      if (served < bestTurn) {
        best = user;
        bestTurn = served;
      }
    }
    return best;
  }

  private pump(): void {
    while (this.active < this.opts.concurrency) {
      const user = this.next();
      if (user === undefined) break;
      const queue = this.waiting.get(user)!;
      const task = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(user);
      this.active++;
      this.running.set(user, (this.running.get(user) ?? 0) + 1);
      this.lastServed.set(user, this.turn++);
      void Promise.resolve()
        .then(task)
        .catch(() => undefined)
        .finally(() => this.finished(user));
    }
  }

  private finished(user: string): void {
    this.active--;
    const left = (this.running.get(user) ?? 1) - 1;
    if (left > 0) this.running.set(user, left);
    else {
      this.running.delete(user);
      if (!this.waiting.has(user)) this.lastServed.delete(user);
    }
    this.pump();
    if (this.size === 0) for (const resolve of this.idle.splice(0)) resolve();
  }
}
