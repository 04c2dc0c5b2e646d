import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BENCH_PRESS_ID, buildTestApp, json, mintMember, type TestApp, type TestMember } from '../../../test/helpers.js';

/**
 * A keyed log's answer is stored by the logging statement itself, as the data it is made of
 * (logging.repo.ts, migrations/0038); these check what a client sees of that.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const log = (member: TestMember, key: string, reps: number, performedAt = '2026-02-01T10:00:00.000Z') =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/member/workout-logs',
    headers: { ...member.headers, 'idempotency-key': key },
    payload: { performed_at: performedAt, sets: [{ exercise_id: BENCH_PRESS_ID, reps, load_kg: 60 }] },
  });

const logsOf = async (member: TestMember) =>
  json(await t.app.inject({ method: 'GET', url: '/api/v1/member/workout-logs', headers: member.headers })).pagination.total as number;

describe('a workout logged with an Idempotency-Key', () => {
  it('answers a retry with the first answer byte for byte, after later records and a deletion changed everything it showed, and logs nothing', async () => {
    const member = await mintMember(t);
    await log(member, 'baseline', 5, '2026-02-01T09:00:00.000Z');
    const first = await log(member, 'the-pr', 8);
    expect(first.statusCode, first.body).toBe(201);
    expect(json(first).data.prs.map((p: { kind: string }) => p.kind)).toContain('max_reps');
    // A later workout beats those records, then the member deletes the first one.
    expect((await log(member, 'better', 12, '2026-02-01T11:00:00.000Z')).statusCode).toBe(201);
    const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/member/workout-logs/${json(first).data.id}`, headers: member.headers });
    expect(deleted.statusCode).toBe(200);

    const retry = await log(member, 'the-pr', 8);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    expect(await logsOf(member)).toBe(2);
  });

  it('answers 409 idempotency_key_reused to its key sent with another workout, or to another route', async () => {
    const member = await mintMember(t);
    expect((await log(member, 'once', 5)).statusCode).toBe(201);
    const other = await log(member, 'once', 6);
    expect(other.statusCode).toBe(409);
    expect(json(other).error.code).toBe('idempotency_key_reused');
    const elsewhere = await t.app.inject({
      method: 'POST',
      url: '/api/v1/member/challenges/0190a0a0-0000-7000-8000-000000000000/join',
      headers: { ...member.headers, 'idempotency-key': 'once' },
    });
    expect(elsewhere.statusCode).toBe(409);
    expect(json(elsewhere).error.code).toBe('idempotency_key_reused');
    expect(await logsOf(member)).toBe(1);
  });

  it('answers a retry of a refused workout with the stored refusal', async () => {
    const member = await mintMember(t);
    const refused = await log(member, 'bad', 5, '2099-01-01T00:00:00.000Z');
    expect(refused.statusCode).toBe(400);
    const retry = await log(member, 'bad', 5, '2099-01-01T00:00:00.000Z');
    expect(retry.statusCode).toBe(400);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(refused.body);
    expect(await logsOf(member)).toBe(0);
  });

  // Another connection holds the key uncommitted while the logging statement runs, as every
  // writer of a key does (its lock first: migrations/0041); the embedded database has one
  // connection, so this needs a server.
  it.runIf(inject('postgresUrl'))('keeps nothing of a log whose key another request stores while it runs, and still logs the others of its batch', async () => {
    const [contested, bystander] = [await mintMember(t), await mintMember(t)];
    let answers: Promise<[Awaited<ReturnType<typeof log>>, Awaited<ReturnType<typeof log>>]> | undefined;
    await t.database.db.transaction().execute(async (trx) => {
      await sql`select * from tribes_keys_locked(array[${`member:${contested.id}`}], array['raced'], 24)`.execute(trx);
      // Stored just before midnight (UTC), as by a request that began then: another partition,
      // which no unique index shares with the log's (migrations/0041), and within the TTL.
      await sql`insert into idempotency_keys (scope, key, request_hash, state, status_code, content_type, response_body, created_at)
        values (${`member:${contested.id}`}, 'raced', 'another request', 'done', 201, 'application/json; charset=utf-8', '{}', tribes_key_partition_start(now()) - interval '1 millisecond')`.execute(trx);
      // Sent together: one logging statement for both, which waits for this transaction on the key.
      answers = Promise.all([log(contested, 'raced', 5), log(bystander, 'calm', 5)]);
      await new Promise((r) => setTimeout(r, 500));
    });
    const [lost, logged] = await answers!;
    expect(lost.statusCode, lost.body).toBe(409);
    expect(json(lost).error.code).toBe('idempotency_key_reused');
    expect(logged.statusCode, logged.body).toBe(201);
    expect(await logsOf(contested)).toBe(0);
    expect(await logsOf(bystander)).toBe(1);
    const training = await t.database.db.selectFrom('member_training').select('member_id').where('member_id', '=', contested.id).execute();
    expect(training).toEqual([]);
  });
});
