import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { count, money } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { Field, FormActions, valueOf } from '../ui/parts.js';
import { centsText, parseCents, PERIOD, PERIOD_LABEL, type Tier } from './communities-labels.js';

type Period = Tier['billing_period'];

/**
 * Creates a tier or edits one. The price is typed in major units ("29.90") and sent as cents
 * read from the digits. A new price (or billing period) on an existing tier goes through a
 * confirmation saying what PATCH /tiers/{id} documents: members who pay now keep their
 * price, new members pay the new one.
 */
export function TierForm({ communityId, currency, tier, onSaved, onCancel }: { communityId: string; currency: string; tier?: Tier; onSaved: () => void; onCancel: () => void }) {
  const [name, setName] = useState(tier?.name ?? '');
  const [price, setPrice] = useState(tier ? centsText(tier.price_cents) : '');
  const [period, setPeriod] = useState<Period>(tier?.billing_period ?? 'monthly');
  const [trial, setTrial] = useState(String(tier?.trial_days ?? 0));
  const [benefits, setBenefits] = useState((tier?.benefits ?? []).join('\n'));
  const [level, setLevel] = useState(tier?.level == null ? '' : String(tier.level));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const prefix = tier ? `tier-${tier.id}` : `new-tier-${communityId}`;
  const cents = parseCents(price);
  const priceChanged = tier !== undefined && cents !== undefined && (cents !== tier.price_cents || period !== tier.billing_period);

  function body() {
    return {
      name,
      // Sent only when changed: a price on an inactive tier is refused (409) even unchanged.
      ...(tier && !priceChanged ? {} : { price_cents: cents!, billing_period: period }),
      trial_days: Number(trial),
      benefits: benefits.split('\n').map((b) => b.trim()).filter(Boolean),
      level: level.trim() === '' ? null : Number(level),
    };
  }

  async function save() {
    if (tier) ok(await api.PATCH('/api/v1/tiers/{id}', { params: { path: { id: tier.id } }, body: body() }));
    else ok(await api.POST('/api/v1/tiers', { body: { community_id: communityId, price_cents: cents!, billing_period: period, ...body() } }));
  }

  async function submit(event: Event) {
    event.preventDefault();
    setError(undefined);
    if (cents === undefined) return setError('Type the price as an amount, for example 29.90.');
    if (cents < 100) return setError(`The price must be at least ${money(100, currency)}.`);
    if (priceChanged) return setConfirming(true);
    setBusy(true);
    try {
      await save();
      onSaved();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  // The confirmation stays outside the form: its own <form method="dialog"> would submit this one too.
  return (
    <>
    <form onSubmit={submit} class="stack-form inline-form" data-testid="tier-form">
      <Field id={`${prefix}-name`} label="Tier name">
        <input id={`${prefix}-name`} required maxLength={120} value={name} onInput={(e) => setName(valueOf(e))} />
      </Field>
      <Field id={`${prefix}-price`} label={`Price (${currency.toUpperCase()})`} hint={`Per billing period, for example 29.90; at least ${money(100, currency)}.`}>
        <input id={`${prefix}-price`} required inputMode="decimal" aria-describedby={`${prefix}-price-hint`} value={price} onInput={(e) => setPrice(valueOf(e))} />
      </Field>
      <Field id={`${prefix}-period`} label="Billing period">
        <select id={`${prefix}-period`} value={period} onChange={(e) => setPeriod(valueOf(e) as Period)}>
          {Object.entries(PERIOD_LABEL).map(([key, label]) => (
            <option value={key}>{label}</option>
          ))}
        </select>
      </Field>
      {priceChanged ? (
        <p class="notice" data-testid="price-change-notice">
          Members who pay for this tier now keep their current price ({money(tier.price_cents, tier.currency)} per {PERIOD[tier.billing_period]}). New members will pay{' '}
          {money(cents, tier.currency)} per {PERIOD[period]}.
        </p>
      ) : null}
      <Field id={`${prefix}-trial`} label="Free trial days" hint="0 to 730 days before the first charge.">
        <input id={`${prefix}-trial`} type="number" min={0} max={730} required aria-describedby={`${prefix}-trial-hint`} value={trial} onInput={(e) => setTrial(valueOf(e))} />
      </Field>
      <Field id={`${prefix}-benefits`} label="Benefits" hint="One per line, up to 20; members see them when they choose a tier.">
        <textarea id={`${prefix}-benefits`} aria-describedby={`${prefix}-benefits-hint`} value={benefits} onInput={(e) => setBenefits(valueOf(e))} />
      </Field>
      <Field id={`${prefix}-level`} label="Level" hint="Optional: a number ordering your tiers (higher is more); leave empty to order them by price.">
        <input id={`${prefix}-level`} type="number" step={1} aria-describedby={`${prefix}-level-hint`} value={level} onInput={(e) => setLevel(valueOf(e))} />
      </Field>
      <FormActions error={error} busy={busy} label={tier ? 'Save tier' : 'Create tier'} onCancel={onCancel} />
    </form>
      {confirming && tier && cents !== undefined ? (
        <Confirm title={`Change the price of ${tier.name}?`} confirmLabel={`Charge new members ${money(cents, tier.currency)}`} onConfirm={save} onClose={() => setConfirming(false)} onDone={onSaved}>
          <p>
            New members will pay <strong>{money(cents, tier.currency)}</strong> per {PERIOD[period]}.
          </p>
          <p>
            {tier.active_subscribers === 0 ? 'No one pays for this tier yet.' : `Its ${count(tier.active_subscribers)} paying members keep the price they pay now`}
            {tier.active_subscribers === 0 ? '' : ` (${money(tier.price_cents, tier.currency)} per ${PERIOD[tier.billing_period]} for those who joined at the current price).`}
          </p>
        </Confirm>
      ) : null}
    </>
  );
}
