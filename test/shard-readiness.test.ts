import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/client.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshDatabase } from './fresh-database.js';
import { openTestDatabase } from './helpers.js';
import { SHARD_PLAN, type Placement } from './shard-plan.js';

/**
 * Issue #31 item 4, "ready to shard by creator": the migrated schema, read from the catalog,
 * against the one list of where each table goes (test/shard-plan.ts, docs/sharding.md).
 */

interface Column { table: string; name: string; notNull: boolean }
interface UniqueKey { table: string; name: string; primary: boolean; columns: string[] }
interface ForeignKey { table: string; columns: string[]; target: string; targetColumns: string[] }
interface Schema { tables: string[]; columns: Column[]; uniques: UniqueKey[]; foreignKeys: ForeignKey[] }

// The simulator's schema is the processor's, never the service's: only the service's own schema
// is read (`processor_sim` on PGlite; on PostgreSQL the run's `<run>_sim_…` schemas).
async function readSchema(database: DatabaseHandle): Promise<Schema> {
  const db = database.db;
  const tables = await sql<{ table: string }>`
    select table_name as table from information_schema.tables
    where table_schema = current_schema() and table_schema <> 'processor_sim' and table_type = 'BASE TABLE'
      and table_name not in (select c.relname from pg_class c where c.relispartition and c.relnamespace = current_schema()::regnamespace)
    order by 1`.execute(db);
  const columns = await sql<{ table: string; name: string; not_null: boolean }>`
    select c.table_name as table, c.column_name as name, c.is_nullable = 'NO' as not_null
    from information_schema.columns c
    where c.table_schema = current_schema()`.execute(db);
  // Primary keys, unique constraints and unique indexes alike: each is a unique index. A table's
  // partitions (idempotency_keys' hours) are the table: only its own are read.
  const uniques = await sql<{ table: string; name: string; primary: boolean; columns: string[] }>`
    select t.relname as table, x.relname as name, i.indisprimary as primary,
           array(select pg_get_indexdef(i.indexrelid, k, true) from generate_series(1, i.indnkeyatts) k order by k) as columns
    from pg_index i
    join pg_class t on t.oid = i.indrelid
    join pg_class x on x.oid = i.indexrelid
    join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and i.indisunique and not t.relispartition`.execute(db);
  const foreignKeys = await sql<{ table: string; columns: string[]; target: string; target_columns: string[] }>`
    select t.relname as table, f.relname as target,
           array(select a.attname::text from unnest(c.conkey) with ordinality k(attnum, ord)
                 join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.ord) as columns,
           array(select a.attname::text from unnest(c.confkey) with ordinality k(attnum, ord)
                 join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.ord) as target_columns
    from pg_constraint c
    join pg_class t on t.oid = c.conrelid
    join pg_class f on f.oid = c.confrelid
    join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and c.contype = 'f'`.execute(db);
  return {
    tables: tables.rows.map((r) => r.table),
    columns: columns.rows.map((r) => ({ table: r.table, name: r.name, notNull: r.not_null })),
    uniques: uniques.rows,
    foreignKeys: foreignKeys.rows.map((r) => ({ table: r.table, columns: r.columns, target: r.target, targetColumns: r.target_columns })),
  };
}

/** Copied to every node in the plan: a foreign key to one of these is allowed from a distributed table. */
function isReference(placement: Placement | undefined): boolean {
  return placement?.class === 'global' || (placement?.class === 'member-owned' && placement.placement === 'reference');
}

/** How `table` breaks the rules of a table distributed by creator_id, as the plan's `gaps` spell it. */
function violations(schema: Schema, table: string): string[] {
  const found: string[] = [];
  const creatorId = schema.columns.find((c) => c.table === table && c.name === 'creator_id');
  if (!creatorId) found.push('no creator_id column');
  else if (!creatorId.notNull) found.push('creator_id is nullable');
  for (const u of schema.uniques.filter((u) => u.table === table)) {
    if (u.columns.includes('creator_id')) continue;
    found.push(u.primary ? `primary key (${u.columns.join(', ')})` : `unique ${u.name} (${u.columns.join(', ')})`);
  }
  for (const fk of schema.foreignKeys.filter((f) => f.table === table)) {
    if (isReference(SHARD_PLAN[fk.target])) continue;
    const i = fk.columns.indexOf('creator_id');
    if (i >= 0 && fk.targetColumns[i] === 'creator_id') continue;
    found.push(`foreign key (${fk.columns.join(', ')}) → ${fk.target} (${fk.targetColumns.join(', ')})`);
  }
  return found.sort();
}

const declared = Object.entries(SHARD_PLAN);
const named = (cls: Placement['class']) => declared.filter(([, p]) => p.class === cls).map(([t]) => t);

describe('readiness to shard by creator', () => {
  let schema: Schema;
  let drop: (() => Promise<void>) | undefined;

  // The migrated schema as the service has it. On PostgreSQL a schema migrated for this file
  // alone: the run's shared one also holds the tables other test files create for themselves.
  // On PGlite this file's own copy of the migrated database (migrating afresh takes ~20 s).
  beforeAll(async () => {
    if (!inject('postgresUrl')) {
      const database = await openTestDatabase();
      try {
        schema = await readSchema(database);
      } finally {
        await database.close();
      }
      return;
    }
    const fresh = await freshDatabase('shard');
    drop = fresh.drop;
    try {
      await migrateToLatest(fresh.handle.db);
      schema = await readSchema(fresh.handle);
    } finally {
      await fresh.handle.close();
    }
  });
  afterAll(async () => {
    await drop?.();
  });

  it('reads the service schema and not the processor simulator’s', () => {
    expect(schema.tables).toContain('creators');
    expect(schema.tables).not.toContain('processor_sim');
    for (const t of schema.tables) expect(t).not.toMatch(/^sim_|^processor_sim/);
  });

  it('finds every table of the schema declared in the shard plan, so no table arrives unclassified', () => {
    const undeclared = schema.tables.filter((t) => !(t in SHARD_PLAN));
    expect(undeclared, 'tables to add to test/shard-plan.ts (and docs/sharding.md)').toEqual([]);
  });

  it('finds every table the shard plan declares in the schema, so the plan does not outlive a dropped table', () => {
    const gone = declared.map(([t]) => t).filter((t) => !schema.tables.includes(t));
    expect(gone, 'tables to remove from test/shard-plan.ts').toEqual([]);
  });

  it('gives every table outside the creator class a one-line reason, and every known gap the migration it needs', () => {
    for (const [table, p] of declared) {
      if (p.class === 'creator') continue;
      expect(p.reason.trim(), table).not.toBe('');
      expect(p.reason, table).not.toContain('\n');
      if (p.class === 'known-gap') {
        expect(p.migration.trim(), table).not.toBe('');
        expect(p.gaps.length, `${table}: a known gap with nothing listed belongs to the creator class`).toBeGreaterThan(0);
      }
    }
  });

  it('holds every creator table to a NOT NULL creator_id that is part of each unique key and foreign key', () => {
    const broken = Object.fromEntries(
      named('creator')
        .map((t) => [t, violations(schema, t)] as const)
        .filter(([, v]) => v.length > 0),
    );
    expect(broken, 'fix the schema, or declare the table a known gap with the migration it needs').toEqual({});
  });

  it('finds each known gap broken exactly as declared, so a new break fails and a fixed one is moved to the creator class', () => {
    const differences: Record<string, { undeclared: string[]; fixed: string[] }> = {};
    for (const [table, p] of declared) {
      if (p.class !== 'known-gap') continue;
      const found = violations(schema, table);
      const undeclared = found.filter((v) => !p.gaps.includes(v));
      const fixed = p.gaps.filter((v) => !found.includes(v));
      if (undeclared.length || fixed.length) differences[table] = { undeclared, fixed };
    }
    expect(differences).toEqual({});
  });

  it('gives every member-owned table distributed by member a NOT NULL member_id', () => {
    const missing = named('member-owned')
      .filter((t) => (SHARD_PLAN[t] as { placement: string }).placement === 'member_id')
      .filter((t) => !schema.columns.some((c) => c.table === t && c.name === 'member_id' && c.notNull));
    expect(missing).toEqual([]);
  });
});
