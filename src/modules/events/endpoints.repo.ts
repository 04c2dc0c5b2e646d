import { sql, type Kysely, type Selectable } from 'kysely';
import { deleteInRounds } from '../../db/purge.js';
import type { Executor } from '../../db/tx.js';
import type { Database, DeliveryStatus, WebhookEndpointsTable } from '../../db/types.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

/** A creator's webhook endpoints and their deliveries; every query is scoped by the creator. */
export function createEndpointsRepo(db: Kysely<Database>) {
  return {
    async page(creatorId: string, { limit, offset }: { limit: number; offset: number }) {
      const [rows, total] = await Promise.all([
        db.selectFrom('webhook_endpoints').selectAll().where('creator_id', '=', creatorId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
        db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<string>().as('n')).where('creator_id', '=', creatorId).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(total.n) };
    },

    find(creatorId: string, id: string, trx: Executor = db, opts: { lock?: boolean } = {}) {
      let q = trx.selectFrom('webhook_endpoints').selectAll().where('creator_id', '=', creatorId).where('id', '=', id);
      if (opts.lock) q = q.forUpdate();
      return q.executeTakeFirst();
    },

    async count(creatorId: string, trx: Executor) {
      const row = await trx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<string>().as('n')).where('creator_id', '=', creatorId).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    insert(row: Omit<EndpointRow, 'created_at' | 'updated_at' | 'enabled' | 'disabled_reason' | 'previous_secret' | 'previous_secret_expires_at' | 'failing_since'>, trx: Executor) {
      return trx.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
    },

    update(creatorId: string, id: string, patch: Partial<Omit<EndpointRow, 'id' | 'creator_id' | 'created_at'>>, trx: Executor) {
      return trx
        .updateTable('webhook_endpoints')
        .set({ ...patch, updated_at: sql<Date>`now()` })
        .where('creator_id', '=', creatorId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    remove(creatorId: string, id: string, trx: Executor) {
      return trx.deleteFrom('webhook_endpoints').where('creator_id', '=', creatorId).where('id', '=', id).executeTakeFirst();
    },

    async pageDeliveries(creatorId: string, endpointId: string, { status, limit, offset }: { status?: DeliveryStatus; limit: number; offset: number }) {
      let q = db.selectFrom('webhook_deliveries').where('creator_id', '=', creatorId).where('endpoint_id', '=', endpointId);
      if (status) q = q.where('status', '=', status);
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
        q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(total.n) };
    },

    findDelivery(creatorId: string, endpointId: string, id: string, trx: Executor = db) {
      return trx
        .selectFrom('webhook_deliveries as d')
        .innerJoin('events as e', 'e.id', 'd.event_id')
        .selectAll('d')
        .select(['e.data', 'e.created_at as event_created_at'])
        .where('d.creator_id', '=', creatorId)
        .where('d.endpoint_id', '=', endpointId)
        .where('d.id', '=', id)
        .executeTakeFirst();
    },

    attempts(deliveryId: string) {
      return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('n').execute();
    },

    /** Due now again (a settled one, or one waiting for a later retry), its attempt count kept. */
    requeue(creatorId: string, endpointId: string, id: string, trx: Executor) {
      return trx
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', next_attempt_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
        .where('creator_id', '=', creatorId)
        .where('endpoint_id', '=', endpointId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },

    /** Every dead delivery of the endpoint created since `since`, due now again. */
    async requeueDead(creatorId: string, endpointId: string, since: Date, trx: Executor) {
      const result = await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', next_attempt_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
        .where('creator_id', '=', creatorId)
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', 'dead')
        .where('created_at', '>=', since)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** For the metrics: deliveries due now and not yet claimed (a growing number: senders fall behind), and dead ones. */
    async backlog() {
      const row = await sql<{ due: number; dead: number }>`select
          (select count(*)::int from webhook_deliveries where status = 'pending' and next_attempt_at <= now()) as due,
          (select count(*)::int from webhook_deliveries where status = 'dead') as dead`.execute(db);
      return row.rows[0]!;
    },

    /** Events past retention, with their deliveries and attempts (cascade), in bounded rounds; none with a delivery still pending. */
    purge: (retentionDays: number) =>
      deleteInRounds(
        db,
        'events',
        sql`created_at < now() - make_interval(days => ${retentionDays})
          and not exists (select 1 from webhook_deliveries d where d.event_id = events.id and d.status = 'pending')`,
        'created_at',
      ),
  };
}

export type EndpointsRepo = ReturnType<typeof createEndpointsRepo>;
