import type { Logger } from 'pino';
import { onPrimary } from '../db/read-routing.js';

/**
 * Work started after a response (webhook processing, propagating a pause). Each task is
 * tracked so shutdown and tests can wait for the work in flight; a failure is logged, never
 * thrown at a caller that has already been answered — the durable record (inbox row,
 * reconciliation) is what guarantees the work eventually happens.
 */
export class TaskRunner {
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly logger: Logger) {}

  run(name: string, work: () => Promise<unknown>): void {
    // On the primary even when started by a request whose reads go to a replica.
    const task = onPrimary(work)
      .catch((err: unknown) => this.logger.error({ err, task: name }, 'background task failed'))
      .finally(() => this.running.delete(task));
    this.running.add(task);
  }

  /** Resolves once no task is running, including tasks started by tasks. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

/** A repeating job that never overlaps itself and stops cleanly. */
export function every(ms: number, job: () => Promise<unknown>, logger: Pick<Logger, 'error'>, name: string): () => Promise<void> {
  let current: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (current) return;
    current = job()
      .catch((err: unknown) => logger.error({ err, job: name }, 'scheduled job failed'))
      .finally(() => (current = undefined));
  }, ms);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await current;
  };
}
