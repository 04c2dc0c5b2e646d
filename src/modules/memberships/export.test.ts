import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, createCreator, createMember, createTier, json, type TestApp, type TestCreator } from '../../../test/helpers.js';
import {
  addMember,
  addMembersInBulk,
  catalogExercises,
  communityWithTiers,
  exportMembers,
  getMemberRecord,
  listAllMembers,
  logWorkout,
  mirrorSubscription,
  setLastActive,
  onClock,
  placeIn,
} from '../../../test/members-kit.js';
import type { SubscriptionStatus } from '../../db/types.js';
import { createDirectoryRepo } from './directory.repo.js';
import { createMembersExport, type ExportLimits, type MembersExport } from './export.service.js';
import { createMembershipRepo } from '../subscriptions/membership.repo.js';

/** GET /api/v1/members/export.csv: RFC 4180 CSV of the list's members, filters and order. */
const START = new Date('2026-06-15T12:00:00Z');
let clock = START;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ now: () => clock });
});
afterAll(async () => t.close());

const { ago, join } = onClock(() => t, () => clock);
const HEADER = ['id', 'name', 'email', 'avatar_url', 'status', 'joined_at', 'last_active_at', 'workouts_completed_30d', 'posts_count_30d', 'streak_days', 'tiers'];

/**
 * A strict RFC 4180 reader: records end with CRLF (a bare CR or LF outside quotes is an
 * error), a field is quoted when it holds a comma, quote or line break, quotes inside are
 * doubled. Returns the records, header included.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  if (text.length === 0) return records;
  for (;;) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text[i] === '\r' && text[i + 1] === '\n') {
      records.push(record);
      record = [];
      i += 2;
      if (i === text.length) return records;
      continue;
    }
    if (i >= text.length) throw new Error('the last record does not end with CRLF');
    throw new Error(`a bare ${JSON.stringify(text[i])} at ${i} (records end with CRLF)`);
  }
}

/** The export's records as objects by column, after checking the response and the header. */
async function exportRows(creator: TestCreator, query = '') {
  const res = await exportMembers(t, creator, query);
  expect(res.statusCode, res.body).toBe(200);
  const [header, ...rows] = parseCsv(res.body);
  expect(header).toEqual(HEADER);
  for (const row of rows) expect(row.length).toBe(HEADER.length);
  return rows.map((r) => Object.fromEntries(HEADER.map((h, i) => [h, r[i]!])) as Record<string, string>);
}


const place = (creator: TestCreator, tierName?: string) => placeIn(t, creator, tierName);

/** An export service of its own on this file's database (its own slots), for batch-level tests. */
const exporter = (limits: Partial<ExportLimits> = {}) =>
  createMembersExport({ database: t.database, directory: createDirectoryRepo(t.database.db), now: () => clock, limits: { ...t.config.membersExport, ...limits } });

/** The member ids of every batch of `running`, in order. */
async function idsOf(running: MembersExport): Promise<string[]> {
  const ids: string[] = [];
  for (let rows = await running.next(); rows; rows = await running.next()) ids.push(...rows.map((r) => r.member_id));
  return ids;
}

describe('the CSV', () => {
  it('is text/csv with the documented header, CRLF line ends and one record per member, matching the list and the record', async () => {
    clock = START;
    const creator = await createCreator(t);
    const a = await place(creator, 'Ouro');
    const b = await place(creator, 'Prata');
    const member = await createMember(t, { name: 'Ana Lima' });
    const quiet = await addMember(t, { name: 'Bruno Quieto', avatarUrl: 'https://cdn.example.com/b.png' });
    await join(creator, a, member.id, 'active', 20);
    await join(creator, b, member.id, 'trialing', 2);
    await join(creator, a, quiet, 'past_due', 1);
    const [exercise] = await catalogExercises(t, 1);
    await logWorkout(t, member, { communityId: a.communityId, performedAt: ago(1) }, exercise);
    await logWorkout(t, member, { communityId: b.communityId, performedAt: ago(0) }, exercise);

    const res = await exportMembers(t, creator);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv(;|$)/);
    expect(res.headers['content-type']).toMatch(/charset=utf-8/i);
    expect(res.headers['content-disposition']).toMatch(/^attachment/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.charCodeAt(0)).not.toBe(0xfeff);
    expect(res.body.startsWith(`${HEADER.join(',')}\r\n`)).toBe(true);
    expect(res.body.endsWith('\r\n')).toBe(true);
    // No line break other than CRLF anywhere (none of these fields holds one).
    expect(res.body.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);

    const rows = await exportRows(creator);
    const list = await listAllMembers(t, creator);
    expect(rows.map((r) => r.id)).toEqual(list.map((m) => m.id));
    for (const [i, m] of list.entries()) {
      const record = json(await getMemberRecord(t, creator, m.id)).data;
      expect(rows[i]).toEqual({
        id: m.id,
        name: m.name,
        email: m.email,
        avatar_url: m.avatar_url ?? '',
        status: record.status,
        joined_at: record.joined_at,
        last_active_at: m.engagement.last_active_at ?? '',
        workouts_completed_30d: String(m.engagement.workouts_completed_30d),
        posts_count_30d: String(m.engagement.posts_count_30d),
        streak_days: String(m.engagement.streak_days),
        tiers: m.subscriptions.map((s: { tier_name: string; status: string }) => `${s.tier_name}: ${s.status}`).join('; '),
      });
    }
    expect(rows.find((r) => r.id === member.id)).toMatchObject({
      status: 'active',
      tiers: 'Ouro: active; Prata: trialing',
      workouts_completed_30d: '2',
      streak_days: '2',
      last_active_at: START.toISOString(),
      joined_at: ago(20).toISOString(),
    });
    expect(rows.find((r) => r.id === quiet)).toMatchObject({ status: 'at_risk', tiers: 'Ouro: past_due', last_active_at: '', avatar_url: 'https://cdn.example.com/b.png' });
  });

  it('is only the header for a creator with no members (or no match)', async () => {
    const creator = await createCreator(t);
    const res = await exportMembers(t, creator);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(`${HEADER.join(',')}\r\n`);
    const filtered = await exportMembers(t, creator, '?status=churned&q=nobody');
    expect(filtered.body).toBe(`${HEADER.join(',')}\r\n`);
  });

  it('quotes fields holding commas, double quotes or line breaks, and they read back exactly (RFC 4180)', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator, 'Tier, with "comma"');
    const names = ['Silva, Maria', 'Maria "Mia" Silva', 'Line\nBreak', 'Carriage\r\nReturn', 'Only\rCR', 'Plain Name', '"', ',', 'Zé; Ponto'];
    const byName: Record<string, string> = {};
    for (const [i, name] of names.entries()) {
      byName[name] = await addMember(t, { name, email: `q${i}-${Date.now()}@example.com` });
      await join(creator, at, byName[name]!, 'active', i + 1);
    }
    const res = await exportMembers(t, creator);
    expect(res.body).toContain('"Silva, Maria"');
    expect(res.body).toContain('"Maria ""Mia"" Silva"');
    expect(res.body).toContain('"Line\nBreak"');
    expect(res.body).toContain('"Carriage\r\nReturn"');
    expect(res.body).toContain(',Plain Name,');
    expect(res.body).toContain(',"""",');
    expect(res.body).toContain('"Tier, with ""comma"": active"');
    const rows = await exportRows(creator);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.name]))).toEqual(Object.fromEntries(names.map((n) => [byName[n], n])));
    for (const r of rows) expect(r.tiers).toBe('Tier, with "comma": active');
  });

  it('prefixes with a quote mark every cell a spreadsheet would run as a formula', async () => {
    clock = START;
    const creator = await createCreator(t);
    const { communityId } = await communityWithTiers(t, creator, []);
    const tier = await createTier(t, creator, communityId, { name: '=Evil Tier' });
    const at = { communityId, tierId: tier.id };
    const cases: Array<{ name: string; email?: string; avatarUrl?: string }> = [
      { name: '=1+1' },
      { name: '+SUM(A1:A9)' },
      { name: '-2+3' },
      { name: '@cmd' },
      { name: '\tTabbed' },
      { name: '\rReturned' },
      { name: '=HYPERLINK("http://evil.example","click")' },
      { name: 'Safe = not first', email: `=formula-${Date.now()}@example.com`, avatarUrl: '=IMAGE("http://evil.example/x.png")' },
    ];
    const ids: string[] = [];
    for (const [i, c] of cases.entries()) {
      ids.push(await addMember(t, c));
      await join(creator, at, ids[i]!, 'active', i + 1);
    }
    const rows = await exportRows(creator);
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    for (const [i, c] of cases.entries()) {
      const row = byId[ids[i]!]!;
      const expectedName = /^[=+\-@\t\r]/.test(c.name) ? `'${c.name}` : c.name;
      expect(row.name, JSON.stringify(c.name)).toBe(expectedName);
      expect(row.tiers).toBe("'=Evil Tier: active");
    }
    const safe = byId[ids[7]!]!;
    expect(safe.email).toBe(`'${cases[7]!.email}`);
    expect(safe.avatar_url).toBe(`'${cases[7]!.avatarUrl}`);
    // No cell of the file starts with a formula character.
    for (const r of rows) for (const v of Object.values(r)) expect(v, v).not.toMatch(/^[=+\-@\t\r]/);
  });
});

describe('filters and order', () => {
  it('exports what the list shows for the same filters and sort, in the same order', async () => {
    clock = START;
    const creator = await createCreator(t);
    const a = await place(creator, 'A');
    const b = await place(creator, 'B');
    const statuses: SubscriptionStatus[] = ['active', 'trialing', 'past_due', 'canceled', 'active'];
    const names = ['Ágata', 'bruno', 'Bruno', 'Carla Souza', 'davi', 'Élise Souza', 'Fábio', 'gabi', 'Hugo Souza', 'Íris'];
    for (const [i, name] of names.entries()) {
      const id = await addMember(t, { name });
      await join(creator, i % 3 ? a : b, id, statuses[i % statuses.length]!, (i % 4) + 1);
      if (i % 2 === 0) await join(creator, b, id, statuses[(i + 1) % statuses.length]!, (i % 5) + 1);
      if (i % 3 === 1) await setLastActive(t, creator.id, id, ago(i % 2));
    }
    const queries = [
      '',
      '?sort=joined_at',
      '?sort=-joined_at',
      '?sort=name',
      '?sort=-name',
      '?sort=last_active_at',
      '?sort=-last_active_at',
      `?community_id=${a.communityId}`,
      `?community_id=${b.communityId}&sort=joined_at`,
      `?tier_id=${b.tierId}&sort=-name`,
      '?status=active',
      '?status=trial',
      '?status=at_risk&sort=name',
      '?status=churned',
      `?community_id=${b.communityId}&status=churned`,
      '?q=souza',
      '?q=SOUZA&sort=-last_active_at',
      `?joined_after=${encodeURIComponent(ago(2.5).toISOString())}`,
      `?joined_after=2026-06-13&community_id=${b.communityId}`,
    ];
    for (const query of queries) {
      const listed = await listAllMembers(t, creator, query);
      const exported = await exportRows(creator, query);
      expect(exported.map((r) => r.id), query).toEqual(listed.map((m) => m.id));
    }
  });

  it('gives each row the status within the community it is filtered to', async () => {
    clock = START;
    const creator = await createCreator(t);
    const trialAt = await place(creator, 'Trial');
    const churnAt = await place(creator, 'Churn');
    const liveAt = await place(creator, 'Live');
    const member = await addMember(t, { name: 'Três' });
    await join(creator, trialAt, member, 'trialing', 3);
    await join(creator, churnAt, member, 'canceled', 9);
    await join(creator, liveAt, member, 'active', 2);
    expect((await exportRows(creator)).map((r) => r.status)).toEqual(['active']);
    expect((await exportRows(creator, `?community_id=${trialAt.communityId}`)).map((r) => r.status)).toEqual(['trial']);
    expect((await exportRows(creator, `?community_id=${churnAt.communityId}`)).map((r) => r.status)).toEqual(['churned']);
    expect((await exportRows(creator, `?tier_id=${churnAt.tierId}&status=churned`)).map((r) => r.id)).toEqual([member]);
  });

  it('refuses what the list refuses, as a JSON 400 naming the field', async () => {
    const creator = await createCreator(t);
    for (const [query, field] of [
      ['?status=vip', 'status'],
      ['?sort=age', 'sort'],
      ['?joined_after=2026-02-30', 'joined_after'],
      ['?page=1', 'page'],
      ['?limit=10', 'limit'],
      ['?foo=bar', 'foo'],
      ['?community_id=nope', 'community_id'],
      [`?q=${'x'.repeat(201)}`, 'q'],
    ] as const) {
      const res = await exportMembers(t, creator, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(json(res).error.details.map((d: { field: string }) => d.field), query).toContain(field);
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/members/export.csv' })).statusCode).toBe(401);
  });

  it('shows each creator only their own members, subscriptions and activity', async () => {
    clock = START;
    const alpha = await createCreator(t);
    const beta = await createCreator(t);
    const a = await place(alpha, 'Alpha');
    const b = await place(beta, 'Beta');
    const shared = await createMember(t, { name: 'Shared' });
    const betaOnly = await addMember(t, { name: 'Beta Only' });
    await join(alpha, a, shared.id, 'active', 5);
    await mirrorSubscription(t, beta, { ...b, memberId: shared.id }, { status: 'past_due', createdAt: ago(3) });
    await mirrorSubscription(t, beta, { ...b, memberId: betaOnly }, { status: 'active', createdAt: ago(3) });
    const [exercise] = await catalogExercises(t, 1);
    await logWorkout(t, shared, { communityId: b.communityId, performedAt: ago(0) }, exercise);

    const alphaRows = await exportRows(alpha);
    expect(alphaRows).toEqual([
      expect.objectContaining({ id: shared.id, status: 'active', tiers: 'Alpha: active', last_active_at: '', workouts_completed_30d: '0', streak_days: '0', joined_at: ago(5).toISOString() }),
    ]);
    const betaRows = await exportRows(beta, '?sort=name');
    expect(betaRows.map((r) => r.id)).toEqual([betaOnly, shared.id]);
    expect(betaRows[1]).toMatchObject({ status: 'at_risk', tiers: 'Beta: past_due', last_active_at: START.toISOString(), workouts_completed_30d: '1', streak_days: '1', joined_at: ago(3).toISOString() });
    expect(await exportRows(alpha, `?community_id=${b.communityId}`)).toEqual([]);
  });
});

describe('large exports', () => {
  /**
   * Rows strictly in the sort's order, read from the CSV's own columns: the key (name ignoring
   * case and accents; times as ISO text, which sorts as time), then id in the same direction;
   * members never active last descending, first ascending.
   */
  function expectOrdered(rows: Array<Record<string, string>>, sort: string) {
    const desc = sort.startsWith('-');
    const key = sort.replace(/^-/, '');
    const value = (r: Record<string, string>) => (key === 'name' ? r.name!.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase() : r[key]!);
    for (let i = 1; i < rows.length; i++) {
      const [x, y] = [rows[i - 1]!, rows[i]!];
      const [vx, vy] = [value(x), value(y)];
      let c: number;
      // Never active ('' in the CSV) sorts before every time ascending, after every time descending.
      if (key === 'last_active_at' && (vx === '') !== (vy === '')) c = vx === '' ? -1 : 1;
      else c = vx < vy ? -1 : vx > vy ? 1 : x.id! < y.id! ? -1 : x.id! > y.id! ? 1 : 0;
      if (desc) c = -c;
      expect(c, `${sort}: row ${i} (${vx} ${x.id}) then (${vy} ${y.id})`).toBe(-1);
    }
  }

  it('exports more members than one batch, each once, in the order of the list for every sort', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator, 'Bulk');
    // 1,100 members; every three share a join time, so ties straddle the 1,000-row batch edge.
    const ids = await addMembersInBulk(t, creator, at, 1100, { joinedAt: ago(1), stepMs: 1000, tieEvery: 3 });
    // 150 share one name (ties in name order across the edge ascending); two in three were active, many at the same instant.
    await sql`update members set name = 'Tie Name' where id = any(${ids.slice(0, 150)}::uuid[])`.execute(t.database.db);
    await createMembershipRepo().rebuild(creator.id, t.database.db);
    await sql`update member_activity m set last_active_at = ${ago(0)}::timestamptz - (x.n % 40) * interval '1 hour'
      from unnest(${ids}::uuid[]) with ordinality as x(id, n)
      where m.creator_id = ${creator.id} and m.member_id = x.id and x.n % 3 <> 0`.execute(t.database.db);

    for (const sort of ['-joined_at', 'joined_at', 'name', '-name', 'last_active_at', '-last_active_at']) {
      const rows = await exportRows(creator, `?sort=${sort}`);
      expect(rows.length, sort).toBe(1100);
      expect(new Set(rows.map((r) => r.id)), sort).toEqual(new Set(ids));
      expectOrdered(rows, sort);
    }
    // And the default order is the list's, page after page.
    expect((await exportRows(creator)).map((r) => r.id)).toEqual((await listAllMembers(t, creator)).map((m) => m.id));
    const filtered = (await exportRows(creator, '?q=tie name&sort=-name')).map((r) => r.id);
    expect(filtered.length).toBe(150);
  });

  it('reads every batch edge right, with any batch size: ties, and members never active on either side', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator, 'Edges');
    const ids = await addMembersInBulk(t, creator, at, 9, { joinedAt: ago(1), stepMs: 1000, tieEvery: 3 });
    await sql`update member_activity m set last_active_at = case when x.n in (2, 3, 5) then null else ${ago(0)}::timestamptz - (x.n % 2) * interval '1 hour' end
      from unnest(${ids}::uuid[]) with ordinality as x(id, n)
      where m.creator_id = ${creator.id} and m.member_id = x.id`.execute(t.database.db);
    const service = exporter();
    for (const sort of ['-joined_at', 'joined_at', 'name', '-name', 'last_active_at', '-last_active_at'] as const) {
      const listed = (await listAllMembers(t, creator, `?sort=${sort}`)).map((m) => m.id);
      for (const batch of [1, 2, 3, 4]) {
        expect(await idsOf(service.open(creator.id, { sort }, batch)), `${sort} in batches of ${batch}`).toEqual(listed);
      }
    }
  });
});

describe('an export while members are active', () => {
  // The service reads the export in keyset batches; a batch of 1 lets a member act between two of them.
  // PostgreSQL reads every batch from one snapshot; the embedded database fixes the order at the first batch and frees its connection in between.
  it('has every member exactly once when one of them logs a workout between two batches of an export sorted by last activity', async () => {
    clock = START;
    const creator = await createCreator(t);
    const at = await place(creator, 'Live');
    const busy = await createMember(t, { name: 'Busy' });
    const others = [await addMember(t, { name: 'Two hours' }), await addMember(t, { name: 'One hour' })];
    for (const id of [busy.id, ...others]) await join(creator, at, id, 'active', 5);
    const [exercise] = await catalogExercises(t, 1);
    const service = exporter();
    const hours = (h: number) => new Date(clock.getTime() - h * 3_600_000);

    const outcomes: Record<string, string[]> = {};
    for (const sort of ['-last_active_at', 'last_active_at'] as const) {
      await setLastActive(t, creator.id, busy.id, hours(3));
      await setLastActive(t, creator.id, others[0]!, hours(2));
      await setLastActive(t, creator.id, others[1]!, hours(1));
      const batches = service.open(creator.id, { sort }, 1);
      const seen: string[] = [];
      const first = await batches.next();
      if (first) seen.push(...first.map((r) => r.member_id));
      // The busy member trains now: their last activity becomes the newest.
      clock = new Date(clock.getTime() + 60_000);
      await logWorkout(t, busy, { communityId: at.communityId, performedAt: clock }, exercise);
      seen.push(...(await idsOf(batches)));
      outcomes[sort] = seen;
    }
    const label = (id: string) => (id === busy.id ? 'busy' : id === others[0] ? 'two hours' : 'one hour');
    const timesSeen = (seen: string[]) => Object.fromEntries([busy.id, ...others].map((id) => [label(id), seen.filter((x) => x === id).length]));
    const once = { busy: 1, 'two hours': 1, 'one hour': 1 };
    expect({ '-last_active_at': timesSeen(outcomes['-last_active_at']!), last_active_at: timesSeen(outcomes['last_active_at']!) }).toEqual({
      '-last_active_at': once,
      last_active_at: once,
    });
  });
});
