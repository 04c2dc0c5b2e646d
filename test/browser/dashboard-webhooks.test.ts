import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, startReceiver, verified } from '../events-kit.js';
import { createCreator, json, type TestCreator } from '../helpers.js';
import { browserSkipReason, browserSuite } from './browser.js';
import { axeViolations, horizontalOverflow, waitForScreen } from './dashboard-pages.js';
import { apiGet, dashboardWorld, signedIn, type DashboardWorld } from './dashboard-world.js';

type Delivery = { id: string; status: string; next_attempt_at: string | null };

/**
 * The Webhooks screens in Chromium, checked against the creator API: an endpoint added
 * through the form, its secret shown once (and the one that signs), a test event delivered
 * to a receiver and seen succeeded in the delivery log; the endpoint's pages at 375 px.
 */
describe.skipIf(browserSkipReason !== undefined)(`the dashboard's webhooks in Chromium${browserSkipReason ? ` (skipped: ${browserSkipReason})` : ''}`, browserSuite, () => {
  let w: DashboardWorld;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    w = await dashboardWorld();
    receiver = await startReceiver();
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    await w?.close();
  });

  it('adds an endpoint through the form, shows its secret once, and logs a test event it received', async () => {
    const { context, page } = await signedIn(w);
    await page.goto(`${w.origin}/dashboard/#/webhooks`);
    await waitForScreen(page);
    expect(await page.locator('h1').textContent()).toBe('Webhooks');
    await page.getByTestId('add-endpoint').click();
    const form = page.getByTestId('endpoint-form');
    await form.getByLabel('URL', { exact: true }).fill(receiver.url);
    await form.getByTestId('events-some').check();
    await form.getByRole('checkbox', { name: /workout\.logged/ }).check();
    await form.getByLabel('Description (optional)').fill('My CRM');
    await form.getByRole('button', { name: 'Add endpoint' }).click();

    const secret = await page.getByTestId('secret-value').inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await page.getByTestId('secret-once').textContent()).toMatch(/shown only this once/);
    const listed = (await apiGet(w, '/api/v1/webhook-endpoints')).data as Array<{ id: string; url: string; events: string[]; description: string; enabled: boolean }>;
    expect(listed).toHaveLength(1);
    const [endpoint] = listed;
    expect(endpoint).toMatchObject({ url: receiver.url, events: ['workout.logged'], description: 'My CRM', enabled: true });
    await page.getByTestId('endpoint-row').first().waitFor();
    expect(await page.getByTestId('endpoint-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-endpoint-id')))).toEqual([endpoint!.id]);
    expect(await page.getByTestId('endpoint-row').textContent()).toMatch(/workout\.logged.*Enabled/);

    // Once: dismissed, or after a reload, the secret is nowhere on the page.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.getByTestId('secret-once').count()).toBe(0);
    await page.reload();
    await waitForScreen(page);
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('link', { name: receiver.url }).click();
    await waitForScreen(page);
    expect(await page.locator('h1').textContent()).toBe(receiver.url);
    await page.getByTestId('send-test').click();
    await page.getByTestId('endpoint-notice').waitFor();
    await w.t.app.events.drain({ creatorIds: [w.creator.id] });

    // The receiver got a ping signed with the secret the screen showed.
    const [ping] = receiver.ofType('ping');
    expect(ping).toBeDefined();
    expect(verified(secret, ping!).data).toMatchObject({ endpoint_id: endpoint!.id });

    await page.getByTestId('delivery-chip-succeeded').check();
    await page.waitForURL(/status=succeeded/);
    await waitForScreen(page);
    const deliveries = (await apiGet(w, `/api/v1/webhook-endpoints/${endpoint!.id}/deliveries?status=succeeded`)).data as Array<{ id: string; event_type: string }>;
    expect(deliveries.map((d) => d.event_type)).toEqual(['ping']);
    const rows = page.getByTestId('delivery-row');
    expect(await rows.evaluateAll((els) => els.map((e) => [e.getAttribute('data-delivery-id'), e.getAttribute('data-status')]))).toEqual([[deliveries[0]!.id, 'succeeded']]);

    await rows.first().getByRole('link', { name: 'ping' }).click();
    await waitForScreen(page);
    expect(await page.getByTestId('delivery-state').getAttribute('data-status')).toBe('succeeded');
    const detail = (await apiGet(w, `/api/v1/webhook-endpoints/${endpoint!.id}/deliveries/${deliveries[0]!.id}`)).data as { attempts_log: Array<{ status_code: number }> };
    expect(await page.getByTestId('attempt-row').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-status-code'))))).toEqual(detail.attempts_log.map((a) => a.status_code));
    expect(detail.attempts_log.map((a) => a.status_code)).toEqual([200]);
    expect(JSON.parse((await page.getByTestId('delivery-payload').textContent())!)).toMatchObject({ type: 'ping', data: { endpoint_id: endpoint!.id } });

    // Send again: queued, and delivered a second time with the same webhook-id.
    await page.getByTestId('send-again').click();
    await page.getByText(/Queued: it is sent again/).waitFor();
    await w.t.app.events.drain({ creatorIds: [w.creator.id] });
    const pings = receiver.ofType('ping');
    expect(pings).toHaveLength(2);
    expect(pings[1]!.headers['webhook-id']).toBe(pings[0]!.headers['webhook-id']);
    await context.close();
  });

  it("draws an endpoint's pages at 375 px, rotates its secret through a confirmation, disables, recovers and deletes it", async () => {
    const { context, page } = await signedIn(w, { width: 375, height: 800 });
    const [endpoint] = (await apiGet(w, '/api/v1/webhook-endpoints')).data as Array<{ id: string }>;
    const [delivery] = (await apiGet(w, `/api/v1/webhook-endpoints/${endpoint!.id}/deliveries`)).data as Array<{ id: string }>;
    for (const screen of ['webhooks', `webhooks/${endpoint!.id}`, `webhooks/${endpoint!.id}/${delivery!.id}`]) {
      await page.goto(`${w.origin}/dashboard/#/${screen}`);
      await waitForScreen(page);
      expect(await page.locator('.error').allTextContents(), screen).toEqual([]);
      expect(await horizontalOverflow(page), screen).toBe(0);
      expect(await axeViolations(page), screen).toEqual([]);
    }

    await page.goto(`${w.origin}/dashboard/#/webhooks/${endpoint!.id}`);
    await waitForScreen(page);
    await page.getByTestId('rotate-secret').click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.textContent()).toMatch(/old secret keeps signing .* 24 hours/);
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = await page.getByTestId('secret-value').inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await horizontalOverflow(page)).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    const rotated = (await apiGet(w, `/api/v1/webhook-endpoints/${endpoint!.id}`)).data as { secret_rotated_at: string | null };
    expect(rotated.secret_rotated_at).not.toBeNull();

    await page.getByTestId('disable-endpoint').click();
    await page.getByTestId('enable-endpoint').waitFor();
    expect(await page.getByTestId('endpoint-state').textContent()).toMatch(/Disabled.*You turned it off/);
    expect((await apiGet(w, `/api/v1/webhook-endpoints/${endpoint!.id}`)).data).toMatchObject({ enabled: false, disabled_reason: 'creator' });

    // Nothing failed: recovering queues none, and says so.
    await page.getByLabel('Send again every failed delivery since').fill(new Date(Date.now() - 86_400_000).toISOString().slice(0, 10));
    await page.getByRole('button', { name: 'Recover failed deliveries' }).click();
    await expect.poll(() => page.getByTestId('endpoint-notice').textContent()).toMatch(/^0 failed deliveries since .* queued again/);

    await page.getByTestId('delete-endpoint').click();
    expect(await dialog.textContent()).toMatch(/delivery log is deleted with it/);
    await dialog.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.waitForURL(/#\/webhooks$/);
    await waitForScreen(page);
    expect(await page.getByText('No endpoints yet').count()).toBe(1);
    expect((await apiGet(w, '/api/v1/webhook-endpoints')).data).toEqual([]);
    await context.close();
  });

  /** A creator of its own with an endpoint whose receiver answers 503 (retry in 10 s) once, then 200, and one delivery tried once. */
  async function failedOnce(name: string) {
    const creator = await createCreator(w.t, { name });
    let answers = 0;
    const flaky = await startReceiver(() => (answers++ === 0 ? { status: 503, body: 'busy', headers: { 'retry-after': '10' } } : { status: 200, body: 'ok' }));
    const endpoint = await createEndpoint(w.t, creator, { url: flaky.url });
    const sent = await w.t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers });
    expect(sent.statusCode, sent.body).toBe(201);
    await w.t.app.events.drain({ creatorIds: [creator.id] });
    const delivery = json(sent).data as Delivery;
    return { creator, endpoint, delivery, flaky };
  }
  const deliveryOf = async (creator: TestCreator, endpointId: string, id: string) =>
    json(await w.t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpointId}/deliveries/${id}`, headers: creator.headers })).data as Delivery;

  it('shows a delivery that failed once as pending with its retry seconds away, and as succeeded once it is retried, without a reload', async () => {
    const { creator, endpoint, delivery, flaky } = await failedOnce('Coach Rui');
    expect(await deliveryOf(creator, endpoint.id, delivery.id)).toMatchObject({ status: 'pending' });
    const { context, page } = await signedIn(w, undefined, creator);
    await page.goto(`${w.origin}/dashboard/#/webhooks/${endpoint.id}`);
    await waitForScreen(page);
    const row = page.getByTestId('delivery-row');
    expect(await row.getAttribute('data-status')).toBe('pending');
    expect(await row.getByTestId('delivery-next').textContent()).toMatch(/^in \d+ sec\.$/);
    // The attempt's time reads "now" while under half a second old (a fast machine draws the page that soon).
    expect(await row.textContent()).toMatch(/503 · (now|\d+ sec\. ago)/);

    // The delivery's own page is open too, and refreshes its attempts by itself.
    const detail = await context.newPage();
    await detail.goto(`${w.origin}/dashboard/#/webhooks/${endpoint.id}/${delivery.id}`);
    await waitForScreen(detail);
    expect(await detail.getByTestId('delivery-state').getAttribute('data-status')).toBe('pending');
    expect(await detail.getByTestId('delivery-next').textContent()).toMatch(/^in \d+ sec\.$/);

    await expect.poll(async () => Date.parse((await deliveryOf(creator, endpoint.id, delivery.id)).next_attempt_at!) <= Date.now(), { timeout: 20_000, interval: 250 }).toBe(true);
    await w.t.app.events.drain({ creatorIds: [creator.id] });
    expect(await deliveryOf(creator, endpoint.id, delivery.id)).toMatchObject({ status: 'succeeded' });
    // Polled every 5 s while pending: both pages turn by themselves at their next poll (a loaded
    // machine may take a few), on the page and filter they were on.
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 20_000, interval: 250 }).toBe('succeeded');
    expect(await row.getByTestId('delivery-next').textContent()).toBe('—');
    expect(page.url()).toMatch(new RegExp(`#/webhooks/${endpoint.id}$`));
    await expect.poll(() => detail.getByTestId('delivery-state').getAttribute('data-status'), { timeout: 20_000, interval: 250 }).toBe('succeeded');
    expect(await detail.getByTestId('attempt-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-status-code')))).toEqual(['503', '200']);
    await context.close();
    await flaky.close();
  });

  it("stacks a delivery's attempts at 375 px, every one shown without scrolling sideways", async () => {
    const { creator, endpoint, delivery, flaky } = await failedOnce('Coach Lia');
    const { context, page } = await signedIn(w, { width: 375, height: 800 }, creator);
    await page.goto(`${w.origin}/dashboard/#/webhooks/${endpoint.id}/${delivery.id}`);
    await waitForScreen(page);
    // A second attempt, sent again on request, so the list holds more than one.
    await page.getByTestId('send-again').click();
    await page.getByText(/Queued: it is sent again/).waitFor();
    await w.t.app.events.drain({ creatorIds: [creator.id] });
    await expect.poll(() => page.getByTestId('attempt-row').count(), { timeout: 20_000, interval: 250 }).toBe(2);

    const card = page.getByRole('region', { name: 'Attempts', exact: true });
    const { scrollWidth, clientWidth } = await card.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    const wrap = card.getByRole('region', { name: 'Attempts, oldest first' });
    expect(await wrap.evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
    // Every field of every attempt lies inside the card, labelled by its column's name.
    const box = (await card.boundingBox())!;
    for (const cell of await page.getByTestId('attempt-row').locator('th, td').all()) {
      const b = (await cell.boundingBox())!;
      expect(b.x).toBeGreaterThanOrEqual(box.x);
      expect(b.x + b.width).toBeLessThanOrEqual(box.x + box.width);
    }
    const labels = await page
      .getByTestId('attempt-row')
      .first()
      .locator('th, td')
      .evaluateAll((cells) => cells.map((c) => getComputedStyle(c, '::before').content));
    expect(labels).toEqual(['"When"', '"Status"', '"Time taken"', '"Answer (first KB)"', '"Error"']);
    expect(await horizontalOverflow(page)).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
    await flaky.close();
  });
});
