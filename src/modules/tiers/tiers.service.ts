import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso } from '../../db/tx.js';
import { AppError, notFound } from '../../http/errors.js';
import type { KeyedAnswer } from '../../http/idempotency.js';
import { offsetOf, paginated } from '../../http/pagination.js';
import type { Processor } from '../../processor/processor.js';
import type { CommunitiesRepo } from '../communities/communities.repo.js';
import type { CreatorsRepo } from '../creators/creators.repo.js';
import { requireProcessorAccount } from '../creators/processor-account.js';
import type { TierChanges, TierRow, TiersRepo } from './tiers.repo.js';
import type { CreateTierBody, ListTiersQuery, UpdateTierBody } from './tiers.schemas.js';

export const presentTier = (t: TierRow) => ({
  id: t.id,
  community_id: t.community_id,
  name: t.name,
  price_cents: Number(t.price_cents),
  currency: t.currency,
  billing_period: t.billing_period,
  trial_days: t.trial_days,
  benefits: t.benefits,
  is_active: t.is_active,
  level: t.level,
  processor_price_id: t.processor_price_id ?? '',
  processor_product_id: t.processor_product_id ?? '',
  active_subscribers: t.active_subscribers ?? 0,
  created_at: iso(t.created_at),
  updated_at: iso(t.updated_at),
});

export type Tier = ReturnType<typeof presentTier>;

export interface TiersDeps {
  db: Db;
  tiers: TiersRepo;
  communities: CommunitiesRepo;
  creators: CreatorsRepo;
  processor: Processor;
  currency: string;
  logger: Logger;
}

const tierInactive = () =>
  new AppError('tier_inactive', 'The tier is deactivated, so its price cannot change. Reactivate it first (PATCH is_active: true).');
const communityPaused = () =>
  new AppError('community_paused', 'The community is paused; resume it (POST /communities/{id}/resume) before adding or activating tiers.');
const concurrentChange = () => new AppError('conflict', 'The tier was changed by another request meanwhile; read it again and retry.');

/**
 * Tier rules. Processor calls never run inside a database transaction (the embedded
 * database has one connection, and the in-process simulator needs it too); instead the
 * processor goes first and the database write checks nothing moved meanwhile.
 */
export function createTiersService({ db, tiers, communities, creators, processor, currency, logger }: TiersDeps) {
  async function load(creatorId: string, id: string) {
    const row = await tiers.find(creatorId, id);
    if (!row) throw notFound('Tier');
    return row;
  }

  async function communityOf(creatorId: string, communityId: string) {
    const community = await communities.findStatus(creatorId, communityId);
    if (!community) throw notFound('Community');
    return community;
  }

  const accountOf = (creatorId: string) => requireProcessorAccount(creators, creatorId);

  return {
    async get(creatorId: string, id: string) {
      return presentTier(await load(creatorId, id));
    },

    async list(creatorId: string, query: ListTiersQuery) {
      if (query.community_id) await communityOf(creatorId, query.community_id);
      const filter = {
        ...(query.community_id ? { communityId: query.community_id } : {}),
        ...(query.is_active !== undefined ? { isActive: query.is_active } : {}),
      };
      const [rows, total] = await Promise.all([
        tiers.list(creatorId, { ...filter, offset: offsetOf(query), limit: query.limit }),
        tiers.count(creatorId, filter),
      ]);
      return paginated(rows.map(presentTier), total, query);
    },

    /**
     * With an Idempotency-Key the tier id and the processor's keys derive from it: a retry
     * after any failure reuses the product and price the first attempt created. Without one,
     * a failed local write archives them, so nothing can be bought that no tier refers to.
     */
    async create(creatorId: string, input: CreateTierBody, answer?: KeyedAnswer<Tier>) {
      const community = await communityOf(creatorId, input.community_id);
      if (community.status === 'paused') throw communityPaused();
      const account = await accountOf(creatorId);
      const id = answer?.idFor('tier') ?? newId();
      const priceInput = {
        tierId: id,
        name: input.name.trim(),
        priceCents: input.price_cents,
        currency,
        billingPeriod: input.billing_period,
        active: input.is_active ?? true,
      };
      const { productId, priceId } = await processor.createTierProduct(account, priceInput);
      try {
        return await inTransaction(db, answer, async (trx) => {
          // Re-read under lock: the community may have been paused while the processor answered.
          const locked = await communities.findStatus(creatorId, input.community_id, trx, { lock: true });
          if (locked?.status !== 'active') throw communityPaused();
          await tiers.insert(
            creatorId,
            {
              id,
              community_id: input.community_id,
              name: priceInput.name,
              price_cents: input.price_cents,
              currency,
              billing_period: input.billing_period,
              trial_days: input.trial_days ?? 0,
              benefits: input.benefits ?? [],
              is_active: priceInput.active,
              level: input.level ?? null,
              processor_product_id: productId,
              processor_price_id: priceId,
            },
            trx,
          );
          await tiers.recordPrice(creatorId, { processor_price_id: priceId, tier_id: id, price_cents: input.price_cents, billing_period: input.billing_period, currency }, trx);
          return presentTier((await tiers.find(creatorId, id, trx))!);
        });
      } catch (err) {
        // Nothing local refers to the new product and price: archive them so no one can buy
        // them — unless a keyed retry is to reuse them (it gets the same ones back).
        if (!answer) {
          await processor
            .archiveTierProduct(account, productId, priceId)
            .catch((e: unknown) => logger.warn({ err: e, productId, priceId }, 'could not archive an orphaned product and price'));
        }
        throw err;
      }
    },

    async update(creatorId: string, id: string, input: UpdateTierBody) {
      const tier = await load(creatorId, id);
      const account = await accountOf(creatorId);
      const currentPrice = tier.processor_price_id ?? '';
      const changes: TierChanges = {};
      const priceChanges =
        (input.price_cents !== undefined && input.price_cents !== Number(tier.price_cents)) ||
        (input.billing_period !== undefined && input.billing_period !== tier.billing_period);
      if (priceChanges && !tier.is_active) throw tierInactive();
      const activating = input.is_active === true && !tier.is_active;
      const deactivating = input.is_active === false && tier.is_active;
      if (activating && (await communityOf(creatorId, tier.community_id)).status === 'paused') throw communityPaused();

      const name = input.name?.trim();
      if (name !== undefined && name !== tier.name) {
        await processor.updateProduct(account, tier.processor_product_id ?? '', { name });
        changes.name = name;
      }
      let newPrice: { id: string; price_cents: number; billing_period: TierRow['billing_period'] } | undefined;
      if (priceChanges) {
        const price_cents = input.price_cents ?? Number(tier.price_cents);
        const billing_period = input.billing_period ?? tier.billing_period;
        const priceId = await processor.createTierPrice(
          account,
          tier.processor_product_id ?? '',
          { tierId: id, name: tier.name, priceCents: price_cents, currency: tier.currency, billingPeriod: billing_period, active: true },
          newId(),
        );
        newPrice = { id: priceId, price_cents, billing_period };
        Object.assign(changes, { price_cents, billing_period, processor_price_id: priceId });
      }
      if (activating || deactivating) {
        await processor.setPriceActive(account, currentPrice, activating);
        changes.is_active = activating;
      }
      if (input.trial_days !== undefined) changes.trial_days = input.trial_days;
      if (input.benefits !== undefined) changes.benefits = input.benefits;
      if (input.level !== undefined) changes.level = input.level;

      await db.transaction().execute(async (trx) => {
        if (!(await tiers.update(creatorId, id, currentPrice, changes, trx))) throw concurrentChange();
        if (newPrice) {
          await tiers.recordPrice(
            creatorId,
            { processor_price_id: newPrice.id, tier_id: id, price_cents: newPrice.price_cents, billing_period: newPrice.billing_period, currency: tier.currency },
            trx,
          );
        }
      });
      // The old price stays valid for the subscribers already on it (Stripe keeps billing
      // archived prices); archiving it only stops new checkouts from using it.
      if (newPrice) {
        await processor.setPriceActive(account, currentPrice, false).catch((err: unknown) => logger.warn({ err, priceId: currentPrice }, 'could not archive the previous price'));
      }
      return presentTier(await load(creatorId, id));
    },

    /** DELETE deactivates: no new subscriptions; existing ones continue. Deactivating twice is a no-op. */
    async deactivate(creatorId: string, id: string) {
      const tier = await load(creatorId, id);
      if (!tier.is_active) return presentTier(tier);
      const account = await accountOf(creatorId);
      await processor.setPriceActive(account, tier.processor_price_id ?? '', false);
      await db.transaction().execute(async (trx) => {
        if (!(await tiers.update(creatorId, id, tier.processor_price_id ?? '', { is_active: false }, trx))) throw concurrentChange();
      });
      return presentTier(await load(creatorId, id));
    },
  };
}

export type TiersService = ReturnType<typeof createTiersService>;
