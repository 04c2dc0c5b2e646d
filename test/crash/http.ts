import type Stripe from 'stripe';

/**
 * One JSON request as the crash suite and the cluster proof (scripts/cluster) send them: its
 * status, its body as text and parsed (undefined when not JSON), its headers.
 */
export interface ApiAnswer {
  status: number;
  json: any;
  text: string;
  headers: Headers;
}

/** One request to `base` (a server, the balancer, or one node directly). */
export async function call(base: string, method: string, url: string, opts: { auth?: string; body?: unknown; key?: string } = {}): Promise<ApiAnswer> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(opts.auth ? { authorization: opts.auth } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(opts.key ? { 'idempotency-key': opts.key } : {}),
    },
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** Each mirrored subscription's one successful charge at the processor (what a refund of it must land on). */
export async function chargeOfEach(
  stripe: Stripe,
  account: string,
  subs: Array<{ id: string; processor_subscription_id: string }>,
): Promise<Array<{ id: string; processorId: string; charge: string }>> {
  return Promise.all(
    subs.map(async (s) => {
      const on = { stripeAccount: account };
      const sub = await stripe.subscriptions.retrieve(s.processor_subscription_id, {}, on);
      const customer = typeof sub.customer === 'string' ? sub.customer : sub.customer.id;
      const charges = (await stripe.charges.list({ customer, limit: 10 }, on)).data.filter((c) => c.status === 'succeeded');
      if (charges.length !== 1) throw new Error(`set-up: subscription ${s.id} has ${charges.length} successful charges, expected 1`);
      return { id: s.id, processorId: s.processor_subscription_id, charge: charges[0]!.id };
    }),
  );
}
