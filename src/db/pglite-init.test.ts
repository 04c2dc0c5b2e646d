import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite, PGLITE_START_PARAMS } from './client.js';
import { initPgliteDataDir } from './pglite-init.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tribes-pglite-init-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('a new embedded data directory', () => {
  it('is made by a child process, then opened, reopened and kept, with the small shared_buffers', async () => {
    const dir = path.join(root, 'a', 'pglite');
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    await initPgliteDataDir(dir, [...PGLITE_START_PARAMS]);
    expect(fs.existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
    expect(fs.readdirSync(path.dirname(dir))).toEqual(['pglite']);

    for (const round of [1, 2]) {
      const handle = await openPglite({ dataDir: dir });
      try {
        if (round === 1) await sql`create table kept (n int)`.execute(handle.db);
        await sql`insert into kept values (${round})`.execute(handle.db);
        const { rows } = await sql<{ n: number }>`select n from kept order by n`.execute(handle.db);
        expect(rows.map((r) => r.n)).toEqual(round === 1 ? [1] : [1, 2]);
        const setting = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(handle.db);
        expect(setting.rows[0]!.shared_buffers).toBe('16MB');
      } finally {
        await handle.close();
      }
    }
  }, 60_000);

  it('replaces an empty directory and leaves one with files in it alone', async () => {
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    await initPgliteDataDir(empty, [...PGLITE_START_PARAMS]);
    expect(fs.existsSync(path.join(empty, 'PG_VERSION'))).toBe(true);

    const occupied = path.join(root, 'occupied');
    fs.mkdirSync(occupied);
    fs.writeFileSync(path.join(occupied, 'notes.txt'), 'mine');
    await initPgliteDataDir(occupied, [...PGLITE_START_PARAMS]);
    expect(fs.readdirSync(occupied)).toEqual(['notes.txt']);
  }, 60_000);
});
