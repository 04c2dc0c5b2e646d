import Stripe from 'stripe';
import type { ProcessorConfig } from '../config.js';
import type { BillingPeriod } from '../db/types.js';
import { createAccountCalls } from './accounts.js';
import { createBillingCalls } from './billing.js';
import { guarded } from './errors.js';
import { createPayoutCalls } from './payouts.js';
import { createScheduleCalls } from './schedules.js';
import { createPortalCalls } from './portal.js';


/**
 * The one module that talks to the payment processor, through the official stripe SDK:
 * real Stripe (PROCESSOR=stripe) or the built-in simulator, which speaks the same API.
 * Everything else calls the functions below and never sees a Stripe error: a failure is a
 * ProcessorFailure or ProcessorDeclined (./errors.ts), raised before the caller has written
 * anything; the HTTP layer maps them to statuses.
 */
export function createStripeClient(config: ProcessorConfig, simulatorPort?: number): Stripe {
  const common = { maxNetworkRetries: 2, timeout: 15_000, appInfo: { name: 'tribes' } };
  if (config.kind === 'stripe') return new Stripe(config.secretKey, common);
  return new Stripe(config.secretKey, {
    ...common,
    host: config.simHost,
    port: simulatorPort ?? config.simPort,
    protocol: 'http',
  });
}

const RECURRING: Record<BillingPeriod, { interval: 'month' | 'year'; interval_count: number }> = {
  monthly: { interval: 'month', interval_count: 1 },
  quarterly: { interval: 'month', interval_count: 3 },
  yearly: { interval: 'year', interval_count: 1 },
};

/**
 * Whether the processor answered a keyed call with the stored answer of an earlier one
 * (Stripe's `Idempotent-Replayed` header): the object is then as it was back then.
 */
export const wasReplayed = (answer: unknown): boolean =>
  (answer as { lastResponse?: { headers?: Record<string, string> } } | null)?.lastResponse?.headers?.['idempotent-replayed'] === 'true';

export interface TierPriceInput {
  /** Our tier id: it names the product and makes the processor calls idempotent on retry. */
  tierId: string;
  name: string;
  priceCents: number;
  currency: string;
  billingPeriod: BillingPeriod;
  active: boolean;
}

export function createProcessor(stripe: Stripe) {
  return {
    stripe,
    ...createAccountCalls(stripe),
    ...createBillingCalls(stripe),
    ...createPayoutCalls(stripe),
    ...createScheduleCalls(stripe),
    ...createPortalCalls(stripe),

    /**
     * A product and its recurring price on the creator's account (direct charges). Keyed by
     * our tier id: a tier id derived from the request's Idempotency-Key makes a retry get
     * the same product and price back.
     */
    async createTierProduct(account: string, input: TierPriceInput): Promise<{ productId: string; priceId: string }> {
      const product = await guarded('create the product', () =>
        stripe.products.create(
          { name: input.name, active: input.active, metadata: { tier_id: input.tierId } },
          { stripeAccount: account, idempotencyKey: `tier-product-${input.tierId}` },
        ),
      );
      const priceId = await this.createTierPrice(account, product.id, input, 'initial');
      return { productId: product.id, priceId };
    },

    /** A new price for a tier (a price change creates a price; Stripe prices are immutable). */
    async createTierPrice(account: string, productId: string, input: TierPriceInput, version: string): Promise<string> {
      const price = await guarded('create the price', () =>
        stripe.prices.create(
          {
            product: productId,
            unit_amount: input.priceCents,
            currency: input.currency,
            recurring: RECURRING[input.billingPeriod],
            active: input.active,
            metadata: { tier_id: input.tierId },
          },
          { stripeAccount: account, idempotencyKey: `tier-price-${input.tierId}-${version}` },
        ),
      );
      return price.id;
    },

    /** Archives a product and its price that no tier refers to. */
    async archiveTierProduct(account: string, productId: string, priceId: string): Promise<void> {
      await this.setPriceActive(account, priceId, false);
      await this.updateProduct(account, productId, { active: false });
    },

    async setPriceActive(account: string, priceId: string, active: boolean): Promise<void> {
      await guarded(active ? 'reactivate the price' : 'deactivate the price', () =>
        stripe.prices.update(priceId, { active }, { stripeAccount: account }),
      );
    },

    async updateProduct(account: string, productId: string, changes: { name?: string; active?: boolean }): Promise<void> {
      await guarded('update the product', () => stripe.products.update(productId, changes, { stripeAccount: account }));
    },
  };
}

export type Processor = ReturnType<typeof createProcessor>;
