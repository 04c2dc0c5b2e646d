import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { openTestDatabase, runSchemaName } from '../../../test/helpers.js';
import type { DatabaseHandle } from '../../db/client.js';
import { startSimulator, type RunningSimulator } from './index.js';

/**
 * Test harness for the simulator's own tests: a database from test/helpers, the simulator
 * on port 0, a local webhook receiver on port 0 and a real `stripe` SDK client. Tests use
 * only the SDK and plain HTTP (test helpers), never the simulator's internals.
 */
export interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export class Receiver {
  readonly deliveries: Delivery[] = [];
  /** Status the receiver answers with; tests flip it to exercise retries. */
  respond: (d: Delivery) => number = () => 200;
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const d = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() };
        this.deliveries.push(d);
        res.writeHead(this.respond(d)).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  events(): Array<{ id: string; type: string; data: { object: any; previous_attributes?: any }; account?: string }> {
    return this.deliveries.map((d) => JSON.parse(d.body));
  }

  ofType(type: string, filter: (obj: any) => boolean = () => true) {
    return this.events().filter((e) => e.type === type && filter(e.data.object));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export interface Kit {
  stripe: Stripe;
  sim: RunningSimulator;
  db: DatabaseHandle;
  receiver: Receiver;
  secret: string;
  helper<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T }>;
  now(): Promise<number>;
  advance(seconds: number): Promise<number>;
  /** Stops the simulator and starts a new one on the same database (restart test). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export const DAY = 86_400;

export async function startKit(opts: { retryBaseDelayMs?: number } = {}): Promise<Kit> {
  const db = await openTestDatabase();
  // Files run in parallel; on a shared PostgreSQL each needs its own clock, hence schema (named
  // after the run's, so that the run's teardown drops it even if this kit is never closed).
  const schema = db.kind === 'postgres' ? runSchemaName('sim') : `processor_sim_t${crypto.randomBytes(5).toString('hex')}`;
  const receiver = new Receiver();
  await receiver.start();
  const secret = `whsec_test_${crypto.randomBytes(12).toString('hex')}`;
  const start = () =>
    startSimulator({ db: db.db, port: 0, webhookUrl: receiver.url, webhookSecret: secret, logger: false, retryBaseDelayMs: opts.retryBaseDelayMs ?? 50, schema });
  const kit: Kit = {
    stripe: undefined as unknown as Stripe,
    sim: await start(),
    db,
    receiver,
    secret,
    async helper(path, body = {}, headers = {}) {
      const res = await fetch(`${kit.sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    },
    async now() {
      const res = await fetch(`${kit.sim.url}/v1/test_helpers/clock`);
      return ((await res.json()) as { now: number }).now;
    },
    async advance(seconds) {
      const res = await kit.helper<{ now: number }>('/v1/test_helpers/clock/advance', { seconds });
      if (res.status !== 200) throw new Error(`advance failed: ${JSON.stringify(res.body)}`);
      return res.body.now;
    },
    async restart() {
      await kit.sim.close();
      kit.sim = await start();
      kit.stripe = client(kit.sim.port);
    },
    async close() {
      await kit.sim.close();
      await receiver.close();
      if (db.kind === 'postgres') await db.db.schema.dropSchema(schema).ifExists().cascade().execute();
      await db.close();
    },
  };
  kit.stripe = client(kit.sim.port);
  return kit;
}

const client = (port: number) => new Stripe('sk_test_simulator', { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 });

export interface Creator {
  account: string;
  price: Stripe.Price;
  product: Stripe.Product;
  opts: { stripeAccount: string };
}

/** A creator's connected account selling one recurring price. */
export async function createCreator(
  kit: Kit,
  o: {
    amount?: number;
    interval?: 'month' | 'year';
    intervalCount?: number;
    schedule?: 'daily' | 'weekly' | 'monthly' | 'manual';
    /** Start the account's own clock at this time (simulator seconds), before it makes anything. */
    clockAt?: number;
    /** Leave the account as created, not onboarded (it can neither charge nor pay out). */
    skipOnboarding?: boolean;
  } = {},
): Promise<Creator> {
  const account = await kit.stripe.accounts.create({ type: 'express', country: 'US', email: `coach-${crypto.randomBytes(3).toString('hex')}@example.com` });
  if (o.schedule && o.schedule !== 'daily') {
    await kit.stripe.accounts.update(account.id, { settings: { payouts: { schedule: { interval: o.schedule } } } });
  }
  if (o.clockAt !== undefined) {
    const started = await kit.helper(`/v1/test_helpers/accounts/${account.id}/clock`, { now: o.clockAt });
    if (started.status !== 200) throw new Error(`account clock failed: ${JSON.stringify(started.body)}`);
  }
  if (!o.skipOnboarding) {
    // New accounts start not onboarded, as at Stripe; most tests want a creator who can sell.
    const onboarded = await kit.helper(`/v1/test_helpers/accounts/${account.id}/onboard`, {});
    if (onboarded.status !== 200) throw new Error(`onboarding failed: ${JSON.stringify(onboarded.body)}`);
  }
  const opts = { stripeAccount: account.id };
  const product = await kit.stripe.products.create({ name: 'Força Total' }, opts);
  const price = await kit.stripe.prices.create(
    { product: product.id, currency: 'usd', unit_amount: o.amount ?? 2999, recurring: { interval: o.interval ?? 'month', interval_count: o.intervalCount ?? 1 } },
    opts,
  );
  return { account: account.id, price, product, opts };
}

/** Opens Checkout for the creator's price and completes it with `paymentMethod`. */
export async function subscribe(kit: Kit, c: Creator, o: { trialDays?: number; paymentMethod?: string; email?: string } = {}) {
  const session = await kit.stripe.checkout.sessions.create(
    {
      mode: 'subscription',
      line_items: [{ price: c.price.id, quantity: 1 }],
      customer_email: o.email ?? 'maria@example.com',
      success_url: 'http://app.test/ok?session={CHECKOUT_SESSION_ID}',
      cancel_url: 'http://app.test/cancel',
      client_reference_id: 'member-1',
      metadata: { community: 'c1' },
      subscription_data: { application_fee_percent: 10, ...(o.trialDays ? { trial_period_days: o.trialDays } : {}) },
    },
    c.opts,
  );
  const done = await kit.helper(`/v1/test_helpers/checkout_sessions/${session.id}/complete`, { payment_method: o.paymentMethod ?? 'pm_card_visa' });
  return { session, done };
}

export async function subscribed(kit: Kit, c: Creator, o: { trialDays?: number } = {}): Promise<Stripe.Subscription> {
  const { done } = await subscribe(kit, c, o);
  if (done.status !== 200) throw new Error(`checkout failed: ${JSON.stringify(done.body)}`);
  return kit.stripe.subscriptions.retrieve(done.body.subscription, {}, c.opts);
}
