import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { EXERCISES } from './catalog.data.js';

/**
 * Upserts the reviewed global catalog (catalog.data.ts, the source of truth) by id. Runs at
 * every start after the migrations: a new entry appears, a corrected one is updated, and a
 * start with nothing changed writes nothing (the WHERE skips identical rows).
 */
export async function seedExerciseCatalog(db: Db): Promise<void> {
  const rows = EXERCISES.map((e) => ({
    id: e.id,
    creator_id: null,
    slug: e.slug,
    name: e.name,
    name_pt: e.name_pt,
    muscle_group: e.muscle_group,
    secondary_muscles: sql<string[]>`${sql.val([...e.secondary_muscles])}::text[]`,
    equipment: sql<string[]>`${sql.val([...e.equipment])}::text[]`,
    kind: e.kind,
  }));
  await db
    .insertInto('exercises')
    .values(rows as never)
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet({
          slug: (eb) => eb.ref('excluded.slug'),
          name: (eb) => eb.ref('excluded.name'),
          name_pt: (eb) => eb.ref('excluded.name_pt'),
          muscle_group: (eb) => eb.ref('excluded.muscle_group'),
          secondary_muscles: (eb) => eb.ref('excluded.secondary_muscles'),
          equipment: (eb) => eb.ref('excluded.equipment'),
          kind: (eb) => eb.ref('excluded.kind'),
          updated_at: sql`now()`,
        })
        .where(
          sql<boolean>`(exercises.slug, exercises.name, exercises.name_pt, exercises.muscle_group, exercises.secondary_muscles, exercises.equipment, exercises.kind)
            is distinct from (excluded.slug, excluded.name, excluded.name_pt, excluded.muscle_group, excluded.secondary_muscles, excluded.equipment, excluded.kind)`,
        ),
    )
    .execute();
}
