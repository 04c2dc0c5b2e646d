import type pg from 'pg';
import type { ServerProcess } from '../../test/crash/server.js';
import type { PgServer, RedisServer } from './infra.js';
import type { ClusterEnv } from './nodes.js';
import type { Receiver } from './receiver.js';
import type { ProofData } from './setup.js';

/** What the cluster is (main.ts starts it) and what each proof check is given and answers. */

export interface Cluster {
  env: ClusterEnv;
  primary: PgServer;
  replica: PgServer;
  redis: RedisServer;
  simulator: ServerProcess;
  nodes: ServerProcess[];
  worker: ServerProcess;
  /** A spare port for a second worker (the scheduled-work check). */
  sparePort: number;
  lbUrl: string;
}

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  violations?: string[];
}

export interface ProofContext {
  cluster: Cluster;
  data: ProofData;
  receiver: Receiver;
  /** Direct reads of effects (rows), on the primary. */
  db: pg.Client;
}

/** The members the load writes for; the others are the other checks' (the crash verifier claims every log of these). */
export const loadMembers = (ctx: ProofContext) => ctx.data.members.slice(0, -2);
export const spareMembers = (ctx: ProofContext) => ctx.data.members.slice(-2);
