/**
 * The bare stack, for bench/reads.ts to measure the real server against: Fastify and
 * node-postgres, nothing else. Each route does what a creator read needs at the least — the
 * SHA-256 of the bearer key looked up by its unique index, then the rows by id scoped by the
 * creator — and answers plain JSON (no schema, no hooks, no plugins, default serializer).
 *
 *   DATABASE_URL=postgres://... PORT=3902 node --import tsx bench/bare-server.ts   (bench/reads.ts runs it bundled)
 *
 * The list also counts the creator's subscriptions: the real answer carries the total, so a
 * bare route that skipped it would not be serving the same page.
 */
import crypto from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

// Idle connections kept as long as the real server keeps them (30 s), so neither pool's backends come and go mid-run.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX ?? 8), idleTimeoutMillis: 30_000 });
const app = Fastify();

async function creatorOf(authorization: string | undefined): Promise<string | undefined> {
  const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
  if (!token) return undefined;
  const hash = crypto.createHash('sha256').update(token).digest();
  const { rows } = await pool.query<{ creator_id: string }>('select creator_id from api_keys where key_hash = $1 and revoked_at is null', [hash]);
  return rows[0]?.creator_id;
}

function byId(path: string, table: string) {
  app.get<{ Params: { id: string } }>(path, async (request, reply) => {
    const creatorId = await creatorOf(request.headers.authorization);
    if (!creatorId) return reply.code(401).send({ success: false });
    const { rows } = await pool.query(`select * from ${table} where id = $1 and creator_id = $2`, [request.params.id, creatorId]);
    if (!rows[0]) return reply.code(404).send({ success: false });
    return { success: true, data: rows[0] };
  });
}

byId('/api/v1/tiers/:id', 'tiers');
byId('/api/v1/communities/:id', 'communities');
byId('/api/v1/subscriptions/:id', 'subscriptions');

app.get<{ Querystring: { limit?: string } }>('/api/v1/subscriptions', async (request, reply) => {
  const creatorId = await creatorOf(request.headers.authorization);
  if (!creatorId) return reply.code(401).send({ success: false });
  const limit = Math.min(Number(request.query.limit ?? 20), 100);
  const [page, count] = await Promise.all([
    pool.query('select * from subscriptions where creator_id = $1 order by created_at desc, id desc limit $2', [creatorId, limit]),
    pool.query<{ n: number }>('select count(*)::int as n from subscriptions where creator_id = $1', [creatorId]),
  ]);
  return { success: true, data: page.rows, pagination: { page: 1, limit, total: count.rows[0]!.n } };
});

app.get('/ready', async () => ({ ok: true }));

await app.listen({ port: Number(process.env.PORT ?? 3902), host: '127.0.0.1' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void app.close().then(() => pool.end()).finally(() => process.exit(0)));
}
