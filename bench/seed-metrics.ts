/**
 * The money side of a members seed (bench/seed-members.ts writes subscriptions but no
 * payments), so the creator metrics' "this month's revenue" reads a realistic table instead
 * of an empty one: one paid invoice per billing period of each subscription's paid life (from
 * its start, every period until it ended or now; a trial pays nothing, a past_due subscription
 * has not paid its current period), at the tier's price, and a refund for ~1% of them a few
 * days after the charge (10% of those failed). Set-based, one statement per table.
 */
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/client.js';
import { phaseTimer } from './progress.js';

export interface MetricsSeed {
  payments: number;
  refunds: number;
}

/**
 * A UUIDv7-shaped id whose time field is a counter (as in seed-members.ts): rows inserted in
 * counter order land at the right edge of the primary key, as ids made by newId() do.
 */
const seqUuid = (ms: string) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || (array['8','9','a','b'])[1 + floor(random() * 4)::int] || substr(md5(random()::text), 1, 15))::uuid`;

const log = (msg: string) => process.stderr.write(`[seed:metrics] ${msg}\n`);

export async function seedPayments(url: string, creatorId: string): Promise<MetricsSeed> {
  const { db, close } = connectPostgres({ url, poolMax: 1, statementTimeoutMs: 3_600_000 });
  const { phase } = phaseTimer(log);
  try {
    return await db.connection().execute(async (conn) => {
      await sql`set synchronous_commit = off`.execute(conn);
      await sql`set work_mem = '256MB'`.execute(conn);
      const base = Date.now() - 40_000_000;
      // The seeder's billing periods (30, 91 and 365 days), counted from created_at as its current_period_start is.
      const payments = await sql`insert into payments (id, creator_id, subscription_id, processor_invoice_id, processor_payment_intent_id, amount_cents, currency, paid_at)
        select id, ${creatorId}, sid, 'in_seed_' || id, 'pi_seed_' || id, price_cents, 'brl', paid_at
        from (
          select ${sql.raw(seqUuid(`${base}::bigint + row_number() over (order by s.created_at, s.id, k)`))} as id,
                 s.id as sid, s.price_cents, s.created_at + k * p.pd as paid_at
          from subscriptions s
          cross join lateral (select case s.billing_period when 'monthly' then interval '30 days' when 'quarterly' then interval '91 days' else interval '365 days' end as pd) p
          cross join lateral generate_series(0, floor(extract(epoch from coalesce(s.ended_at, s.canceled_at, now()) - s.created_at) / extract(epoch from p.pd))::int) as k
          where s.creator_id = ${creatorId} and s.status <> 'trialing'
            and s.created_at + k * p.pd < coalesce(s.ended_at, s.canceled_at, now())
            and not (s.status = 'past_due' and s.created_at + (k + 1) * p.pd > now())
        ) x
        order by id`.execute(conn);
      phase(`inserted ${payments.numAffectedRows} payments`);
      const refunds = await sql`insert into refunds (id, creator_id, subscription_id, amount_cents, currency, status, processor_refund_id, processor_charge_id, created_at)
        select ${sql.raw(seqUuid(`${base}::bigint + 20000000 + row_number() over (order by p.paid_at, p.id)`))}, p.creator_id, p.subscription_id, p.amount_cents,
               'brl', case when random() < 0.1 then 'failed' else 'succeeded' end, 're_seed_' || p.id, 'ch_seed_' || p.id,
               least(now(), p.paid_at + random() * interval '5 days')
        from payments p where p.creator_id = ${creatorId} and random() < 0.01`.execute(conn);
      phase(`inserted ${refunds.numAffectedRows} refunds`);
      await sql`analyze payments, refunds`.execute(conn);
      phase('analyzed payments, refunds');
      return { payments: Number(payments.numAffectedRows ?? 0), refunds: Number(refunds.numAffectedRows ?? 0) };
    });
  } finally {
    await close();
  }
}
