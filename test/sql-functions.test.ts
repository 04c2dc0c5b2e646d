import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/client.js';
import { openTestDatabase } from './helpers.js';

/**
 * The SQL functions that hot statements call per row are written so PostgreSQL inlines them: a
 * function it cannot inline (a STRICT one whose body it cannot prove strict, or one labelled
 * more stable than its body) runs as a call, ~1 µs a row, its body parsed again in every
 * statement (migrations/0040, 0042, 0043). An inlined function leaves no trace of its name in
 * the plan.
 */
let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => database.close());

async function planOf(query: ReturnType<typeof sql>) {
  const { rows } = await sql<{ 'QUERY PLAN': string }>`explain (verbose, costs off) ${query}`.execute(database.db);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('SQL functions called per row', () => {
  it('inlines monthly_cents (0040) and the score bands (0042)', async () => {
    const plan = await planOf(sql`select monthly_cents(s.price_cents, s.billing_period), score_band(s.price_cents::numeric), score_band_end(s.price_cents::numeric) from subscriptions s`);
    expect(plan).not.toMatch(/monthly_cents\(|score_band\(|score_band_end\(/);
  });

  it("inlines kept_appends into the kept instants' triggers' updates (0043)", async () => {
    // The shape of member_logged_kept's update (migrations/0039).
    const plan = await planOf(sql`
      update member_activity a
      set logged = case when kept_appends(a.logged, a.logged_since, n.lo, n.hi) then a.logged || n.added else (kept_merge(a.logged, a.logged_since, n.added)).kept_ end
      from (select now() as lo, now() as hi, array[now()] as added, gen_random_uuid() as creator_id, gen_random_uuid() as member_id) n
      where a.creator_id = n.creator_id and a.member_id = n.member_id`);
    expect(plan).toContain('cardinality(a.logged)');
    expect(plan).not.toContain('kept_appends(');
  });
});
