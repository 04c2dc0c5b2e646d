import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, simHelper, subscribe } from '../../../test/billing-kit.js';
import { buildTestApp, createCommunity, createMember, json, type TestApp, type TestMember } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

const openPortal = (member: TestMember, communityId: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/member/billing-portal', headers: { ...member.headers, ...headers }, payload: { community_id: communityId } });

/**
 * Submits the form of a hosted page that holds the button labelled `button`, as a browser
 * would: its hidden fields and `fields`, form-encoded, to its action (the page itself when
 * it has none). Answers the final response after redirects.
 */
async function submitForm(pageUrl: string, button: string, fields: Record<string, string>): Promise<Response> {
  const html = await (await fetch(pageUrl)).text();
  const form = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].find(([, , inner]) => new RegExp(`>\\s*${button}\\s*<`).test(inner!));
  if (!form) throw new Error(`no form with a "${button}" button on ${pageUrl}:\n${html.slice(0, 2000)}`);
  const [, attributes, inner] = form;
  const action = /action="([^"]*)"/.exec(attributes!)?.[1];
  const body = new URLSearchParams();
  for (const [, input] of inner!.matchAll(/<input\b([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(input!)?.[1];
    if (name && /type="hidden"/.test(input!)) body.set(name, /value="([^"]*)"/.exec(input!)?.[1] ?? '');
  }
  for (const [name, value] of Object.entries(fields)) body.set(name, value);
  return fetch(new URL(action ?? pageUrl, pageUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
}

describe("the processor's billing portal", () => {
  it("opens a portal session for the member's customer on the creator's account, with the creator's portal configuration made once", async () => {
    const s = await subscribe(t);
    const first = await openPortal(s.member, s.communityId);
    expect(first.statusCode, first.body).toBe(201);
    expect(json(first).data.url).toMatch(/^https?:\/\//);
    const second = await openPortal(s.member, s.communityId);
    expect(second.statusCode).toBe(201);
    const creator = await t.database.db.selectFrom('creators').select('billing_portal_configuration_id').where('id', '=', s.creator.id).executeTakeFirstOrThrow();
    expect(creator.billing_portal_configuration_id).toMatch(/^bpc_/);
    const configurations = await t.stripe.billingPortal.configurations.list({ limit: 10 }, { stripeAccount: s.account });
    expect(configurations.data.map((c) => c.id)).toEqual([creator.billing_portal_configuration_id]);
  });

  it('never stores the link: a keyed replay answers url null', async () => {
    const s = await subscribe(t);
    const headers = { 'idempotency-key': `portal-${s.subscription.id}` };
    const first = await openPortal(s.member, s.communityId, headers);
    expect(first.statusCode, first.body).toBe(201);
    expect(json(first).data.url).toBeTruthy();
    const replay = await openPortal(s.member, s.communityId, headers);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json(replay).data).toEqual({ url: null });
  });

  it('answers 404 for a community the member never subscribed in', async () => {
    const s = await subscribe(t);
    const stranger = await createMember(t);
    const res = await openPortal(stranger, s.communityId);
    expect(res.statusCode).toBe(404);
    const elsewhere = await createCommunity(t, s.creator);
    expect((await openPortal(s.member, elsewhere.id)).statusCode).toBe(404);
  });

  it('lets a past_due member update the card in the portal, which pays the renewal and makes the same subscription active again', async () => {
    const s = await subscribe(t);
    const customer = (await t.database.db.selectFrom('subscriptions').select('processor_customer_id').where('id', '=', s.subscription.id).executeTakeFirstOrThrow())
      .processor_customer_id!;
    expect((await simHelper(t, `customers/${customer}/payment_behavior`, { fail: true })).status).toBe(200);
    await advanceDays(t, 31);
    const mine = async () => json(await t.app.inject({ method: 'GET', url: '/api/v1/member/subscriptions', headers: s.member.headers })).data;
    expect(await mine()).toEqual([expect.objectContaining({ id: s.subscription.id, status: 'past_due' })]);

    const portal = await openPortal(s.member, s.communityId);
    expect(portal.statusCode, portal.body).toBe(201);
    const submitted = await submitForm(json(portal).data.url, 'Update card', { payment_method: 'pm_card_visa' });
    expect(submitted.status, await submitted.clone().text()).toBeLessThan(400);
    await t.app.tasks.idle();

    const after = await mine();
    expect(after).toEqual([expect.objectContaining({ id: s.subscription.id, status: 'active' })]);
    const atProcessor = await t.stripe.subscriptions.list({ customer, status: 'all' }, { stripeAccount: s.account });
    expect(atProcessor.data.map((x) => x.status)).toEqual(['active']);
  });
});
