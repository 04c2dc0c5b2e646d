import Stripe from 'stripe';
import type { ProcessorConfig } from '../config.js';
import type { BillingPeriod } from '../db/types.js';
import { AppError } from '../http/errors.js';
import { createBillingCalls } from './billing.js';
import { createPayoutCalls } from './payouts.js';

/**
 * The one module that talks to the payment processor, through the official stripe SDK:
 * real Stripe (PROCESSOR=stripe) or the built-in simulator, which speaks the same API.
 * Everything else calls the functions below and never sees a Stripe error: any failure
 * becomes a 502 `processor_error`, raised before the caller has written anything.
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

export async function guarded<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const e = err as { type?: string; message?: string; statusCode?: number };
    // The processor's own words help for a rejected request; a network failure has nothing to add.
    const reason = e.type === 'StripeInvalidRequestError' && e.message ? `: ${e.message}` : '';
    throw new AppError('processor_error', `The payment processor could not ${what}${reason}. Nothing was changed; retry shortly.`);
  }
}

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
    ...createBillingCalls(stripe),
    ...createPayoutCalls(stripe),

    /** An Express connected account for a new creator; our creator id is its idempotency key. */
    async createConnectedAccount(input: { creatorId: string; email: string; name: string }): Promise<string> {
      const account = await guarded('create the connected account', () =>
        stripe.accounts.create(
          {
            type: 'express',
            email: input.email,
            business_profile: { name: input.name },
            metadata: { creator_id: input.creatorId },
          },
          { idempotencyKey: `creator-account-${input.creatorId}` },
        ),
      );
      return account.id;
    },

    /** A product and its recurring price on the creator's account (direct charges). */
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
