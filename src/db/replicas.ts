import type pg from 'pg';
import type { Logger } from 'pino';
import { connectPostgres, type DatabaseHandle } from './client.js';

export type ReplicaState = 'ok' | 'lagging' | 'down';

export interface ReplicaStatus {
  /** Its host and port (never the credentials). */
  name: string;
  state: ReplicaState;
  /** How far behind the primary it replays, in ms (null: down). */
  lagMs: number | null;
  /** Requests this node sent to it, and how many of them it failed (read again on the primary), since start. */
  reads: number;
  failedReads: number;
}

/** Samples of the primary's WAL position kept to date a replica's replay position. */
const HISTORY_MS = 120_000;

/** `16/B374D848` as a number comparable with another. */
export const lsnValue = (lsn: string): bigint => {
  const [hi = '0', lo = '0'] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};

/**
 * The read replicas (DATABASE_REPLICA_URL) and how far behind each one is. Every `tickMs` the
 * primary's WAL position is sampled, then each replica's replay position: a replica at or
 * past the sample is caught up (lag 0); one behind has replayed what the primary had at the
 * newest sample it has reached, and its lag is the time since that sample. Unlike
 * pg_last_xact_replay_timestamp(), this does not grow while the primary is idle, and a
 * replica cut off from the primary (replaying nothing new) is seen falling behind. A replica
 * that does not answer within a tick is down; one past `maxLagMs` is lagging; reads use
 * only the ones `ok`, and the primary when there is none.
 */
export function createReplicaSet({
  primary,
  urls,
  maxLagMs,
  poolMax,
  statementTimeoutMs,
  logger,
  tickMs = 500,
}: {
  primary: DatabaseHandle;
  urls: string[];
  maxLagMs: number;
  poolMax: number;
  statementTimeoutMs: number;
  logger?: Logger;
  tickMs?: number;
}) {
  const replicas = urls.map((url) => {
    const handle = connectPostgres({ url, poolMax, statementTimeoutMs, logger, connectionTimeoutMs: Math.max(200, tickMs) });
    const { hostname, port } = new URL(url);
    return { handle, pool: handle.pool!, status: { name: `${hostname}:${port || 5432}`, state: 'down', lagMs: null, reads: 0, failedReads: 0 } as ReplicaStatus };
  });
  const history: Array<{ at: number; lsn: bigint }> = [];
  let next = 0;

  const timeout = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('replica did not answer in time')), tickMs * 2).unref())]);

  async function tick(): Promise<void> {
    let primaryLsn: bigint;
    try {
      const { rows } = await primary.pool!.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
      primaryLsn = lsnValue(rows[0]!.lsn);
    } catch {
      return; // the primary is out: nothing to measure against (and nothing else works either)
    }
    const at = Date.now();
    history.push({ at, lsn: primaryLsn });
    while (history.length > 1 && history[0]!.at < at - HISTORY_MS) history.shift();
    await Promise.all(
      replicas.map(async (r) => {
        const before = r.status.state;
        try {
          const { rows } = await timeout(r.pool.query<{ lsn: string | null }>('select pg_last_wal_replay_lsn()::text as lsn'));
          // null: not a standby (a misconfigured URL pointing at a primary): never read from it.
          if (rows[0]?.lsn == null) throw new Error('not a streaming replica (pg_last_wal_replay_lsn() is null)');
          const replay = lsnValue(rows[0].lsn);
          let reached = -1;
          for (let i = history.length - 1; i >= 0; i--) {
            if (history[i]!.lsn <= replay) {
              reached = i;
              break;
            }
          }
          const lagMs = replay >= primaryLsn ? 0 : reached >= 0 ? Date.now() - history[reached]!.at : Date.now() - history[0]!.at;
          r.status = { ...r.status, state: lagMs <= maxLagMs ? 'ok' : 'lagging', lagMs };
        } catch (err) {
          r.status = { ...r.status, state: 'down', lagMs: null };
          if (before !== 'down') logger?.warn({ replica: r.status.name, err: { message: err instanceof Error ? err.message : String(err) } }, 'read replica down: its reads go to the primary');
        }
        if (before !== r.status.state && r.status.state !== 'down') logger?.info({ replica: r.status.name, state: r.status.state, lagMs: r.status.lagMs }, 'read replica state');
      }),
    );
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  return {
    /** Measures once now, then every tickMs. */
    async start() {
      await tick();
      timer = setInterval(() => {
        running ??= tick().finally(() => (running = undefined));
      }, tickMs);
      timer.unref();
    },
    /** A replica fit to read from now (round robin over those `ok`), or null: read the primary. */
    pick(): pg.Pool | null {
      for (let i = 0; i < replicas.length; i++) {
        const r = replicas[(next + i) % replicas.length]!;
        if (r.status.state === 'ok') {
          next = (next + i + 1) % replicas.length;
          r.status.reads++;
          return r.pool;
        }
      }
      return null;
    },
    statuses: (): ReplicaStatus[] => replicas.map((r) => r.status),
    /** A read found `pool`'s replica failing: down until the next tick measures it again. */
    suspect(pool: pg.Pool) {
      const r = replicas.find((x) => x.pool === pool);
      if (r) r.status.failedReads++;
      if (r && r.status.state !== 'down') {
        r.status = { ...r.status, state: 'down', lagMs: null };
        logger?.warn({ replica: r.status.name }, 'read replica failed a read: its reads go to the primary until it answers again');
      }
    },
    /** Measures now (tests). */
    tick,
    async close() {
      clearInterval(timer);
      await running;
      await Promise.all(replicas.map((r) => r.handle.close()));
    },
  };
}

export type ReplicaSet = ReturnType<typeof createReplicaSet>;
