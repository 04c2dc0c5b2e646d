import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freshDatabase } from './fresh-database.js';
import { assertNoSecretsStored, writesFrom } from './stored-secrets.js';

/**
 * The guard every test app runs when it closes (DESIGN §4: keys only as hashes). On
 * PostgreSQL it reads only the row versions written since the app was built, since the run's
 * tables hold every file's rows. Here on a database of the file's own (one table), so that the
 * secret planted below is never in another file's way.
 */
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  fresh = await freshDatabase('secrets_guard');
  await sql`create table notes (id int primary key, body text)`.execute(fresh.handle.db);
});
afterAll(async () => {
  await fresh?.handle.close();
  await fresh?.drop();
});

const WHOLE_KEY = `tribes_sk_${'A1b2C3d4'.repeat(5)}`;
const SESSION_TOKEN = `tribes_ses_${'Zz09'.repeat(10)}`;

describe('the stored-secrets guard', () => {
  it('finds a whole API key written since the span began, names its table, and reads an update as a new write', async () => {
    const db = fresh.handle.db;
    await sql`insert into notes values (1, 'a key prefix only: tribes_sk_A1b2C3')`.execute(db);
    const since = await writesFrom(fresh.handle);
    await expect(assertNoSecretsStored(fresh.handle, since)).resolves.toBeUndefined();
    await sql`update notes set body = ${`leaked ${WHOLE_KEY}`} where id = 1`.execute(db);
    await expect(assertNoSecretsStored(fresh.handle, since)).rejects.toThrow('secrets stored in clear: notes (1 rows)');
    await sql`update notes set body = 'mended' where id = 1`.execute(db);
    await expect(assertNoSecretsStored(fresh.handle, since)).resolves.toBeUndefined();
  });

  it.skipIf(!inject('postgresUrl'))('on PostgreSQL, leaves alone what was written before the span and finds it without one', async () => {
    const db = fresh.handle.db;
    const { rows } = await sql<{ xid: string }>`insert into notes values (2, ${SESSION_TOKEN}) returning pg_current_xact_id()::text as xid`.execute(db);
    // The span starts at the oldest transaction still open anywhere in the cluster: another
    // file's, running beside this one, may have begun before the insert. Wait until none has.
    const since = await spanAfter(BigInt(rows[0]!.xid));
    await expect(assertNoSecretsStored(fresh.handle, since)).resolves.toBeUndefined();
    await expect(assertNoSecretsStored(fresh.handle)).rejects.toThrow('secrets stored in clear: notes (1 rows)');
    await sql`delete from notes where id = 2`.execute(db);
  });
});

/** A span (writesFrom) that begins after transaction `xid`, once no transaction as old is still open. */
async function spanAfter(xid: bigint): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const since = await writesFrom(fresh.handle);
    if (since !== undefined && BigInt(since) > xid) return since;
    if (Date.now() > deadline) throw new Error(`no span after transaction ${xid} within 20 s (oldest open: ${since})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
