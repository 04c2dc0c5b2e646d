import crypto from 'node:crypto';
import type { DatabaseHandle } from '../../db/client.js';
import { openSnapshotReader, type SnapshotReader } from '../../db/snapshot-reader.js';
import { AppError } from '../../http/errors.js';
import type { After, DirectoryRepo, DirectoryRow } from './directory.repo.js';
import { filterOf, sortOf } from './directory.service.js';
import type { ExportMembersQuery } from './memberships.schemas.js';

export interface ExportLimits {
  /** Exports running at once on one server, all creators together. */
  perNode: number;
  /** Exports of one creator running at once on one server: one creator never takes every slot. */
  perCreator: number;
  /** A client that takes nothing for this long is cut off (the route enforces it; PostgreSQL's session backstop follows it). */
  idleTimeoutMs: number;
  /** Members read per batch. */
  batchSize: number;
}

export interface MembersExportDeps {
  database: Pick<DatabaseHandle, 'db' | 'kind'>;
  directory: DirectoryRepo;
  now: () => Date;
  /** The server's configuration (`Config.membersExport`). */
  limits: ExportLimits;
}

/** One running export: its batches in order, then `undefined`. Holds its slots until `close` or the last batch. */
export interface MembersExport {
  next(): Promise<DirectoryRow[] | undefined>;
  /** Frees the snapshot, its connection and the slots; safe at any moment and more than once. */
  close(): Promise<void>;
}

const RETRY_AFTER_S = 60;

/**
 * Slot counting, per server: at most `perNode` exports, and at most `perCreator` of them of
 * one creator. A slot is taken before anything is read and given back exactly once.
 */
function createSlots(limits: ExportLimits) {
  let running = 0;
  const byCreator = new Map<string, number>();
  return {
    take(creatorId: string): () => void {
      const mine = byCreator.get(creatorId) ?? 0;
      if (mine >= limits.perCreator) {
        throw new AppError(
          'rate_limited',
          `An export of your members is already running (at most ${limits.perCreator} at a time per creator); retry when it has finished.`,
          undefined,
          { 'Retry-After': String(RETRY_AFTER_S) },
        );
      }
      if (running >= limits.perNode) {
        throw new AppError('rate_limited', `${limits.perNode} member exports are already running on this server (its limit, all creators together); retry in a minute.`, undefined, {
          'Retry-After': String(RETRY_AFTER_S),
        });
      }
      running++;
      byCreator.set(creatorId, mine + 1);
      let given = false;
      return () => {
        if (given) return;
        given = true;
        running--;
        const left = (byCreator.get(creatorId) ?? 1) - 1;
        if (left > 0) byCreator.set(creatorId, left);
        else byCreator.delete(creatorId);
      };
    },
    counts: () => ({ running, creators: byCreator.size }),
  };
}

export function createMembersExport({ database, directory, now, limits }: MembersExportDeps) {
  const slots = createSlots(limits);
  return {
    limits,
    /** Exports holding a slot now, and of how many creators (tests and operators). */
    running: () => slots.counts(),

    /**
     * Starts an export of every member matching the list's filters, in its order: on
     * PostgreSQL by keyset inside one snapshot; on the embedded database the matches' order is
     * fixed at the first batch and each batch reads the next members of it, the connection
     * free in between. Throws (nothing taken) on a bad filter or when no slot is free; the
     * caller must `close` what it gets, whatever happens to its client.
     */
    open(creatorId: string, query: ExportMembersQuery, batchSize = limits.batchSize): MembersExport {
      const f = filterOf(query);
      const sort = sortOf(query);
      const at = now();
      const giveBack = slots.take(creatorId);
      let reader: Promise<SnapshotReader> | undefined;
      let after: After | undefined;
      // The embedded database: the matches' order, fixed at the first batch in a temporary table, and how far it was read.
      let orderTable: string | undefined;
      let read = 0;
      let done = false;
      let closing: Promise<void> | undefined;

      const close = (): Promise<void> => {
        done = true;
        closing ??= (async () => {
          try {
            const snapshot = await reader?.catch(() => undefined);
            await snapshot?.close();
            if (orderTable) await directory.dropOrder(orderTable, database.db).catch(() => {});
          } finally {
            giveBack();
          }
        })();
        return closing;
      };

      /** The next batch: by keyset inside PostgreSQL's snapshot, or by number from the fixed order on the embedded database. */
      async function batchOf(snapshot: SnapshotReader) {
        if (snapshot.consistency === 'whole') {
          const { rows } = await snapshot.read((executor) => directory.page(creatorId, f, sort, at, { offset: 0, limit: batchSize, ...(after ? { after } : {}) }, executor));
          const last = rows[rows.length - 1];
          if (last) after = { value: last.sort_value, memberId: last.member_id };
          return rows;
        }
        if (!orderTable) {
          orderTable = `members_export_${crypto.randomBytes(8).toString('hex')}`;
          const table = orderTable;
          await snapshot.read((executor) => directory.orderInto(creatorId, f, sort, at, table, executor));
        }
        const table = orderTable;
        const rows = await snapshot.read((executor) => directory.pageInOrder(creatorId, f, table, { after: read, limit: batchSize }, at, executor));
        read += batchSize;
        return rows;
      }

      return {
        async next() {
          if (done) return undefined;
          try {
            reader ??= openSnapshotReader(database, { idleBackstopMs: limits.idleTimeoutMs + 10_000 });
            const snapshot = await reader;
            if (done) return undefined;
            const rows = await batchOf(snapshot);
            // A short batch is the last: the snapshot and slot are freed now, not when the client has read it.
            if (rows.length < batchSize) await close();
            return rows.length ? rows : undefined;
          } catch (err) {
            await close();
            throw err;
          }
        },
        close,
      };
    },
  };
}

export type MembersExportService = ReturnType<typeof createMembersExport>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The member exports running on this server (their slots); tests watch them. */
    membersExport: MembersExportService;
  }
}
