import { sql, type RawBuilder } from 'kysely';
import type { Executor } from './tx.js';

/**
 * Deletes the rows of `table` matching `condition`, oldest `orderColumn` first, in rounds of
 * `batch` rows, so no statement holds many locks or runs long; rows another node is deleting
 * are skipped. By ctid (locked, so stable within the statement): a key `in (...)` form gets a
 * hash join over the whole table once it is large. Returns how many rows it deleted.
 */
export async function deleteInRounds(
  db: Executor,
  table: string,
  condition: RawBuilder<unknown>,
  orderColumn: string,
  { batch = 5_000, maxRounds = 20 }: { batch?: number; maxRounds?: number } = {},
): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < maxRounds; round++) {
    const result = await sql`delete from ${sql.table(table)} where ctid = any(array(
        select ctid from ${sql.table(table)} where ${condition} order by ${sql.ref(orderColumn)} limit ${batch} for update skip locked))`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < batch) break;
  }
  return deleted;
}
