import './money.css';
import { useState } from 'preact/hooks';
import { api, ApiError, messageOf, ok } from '../api/client.js';
import type { DataOf, Schemas } from '../api/types.js';
import { dateTime, money } from '../format.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, ErrorMessage, Stat } from '../ui/parts.js';
import { ManualPayout } from './money-manual.js';
import { Payouts } from './money-payouts.js';
import { href, type Route } from '../router.js';

type Account = DataOf<'/api/v1/account', 'get'>;
type Balance = Schemas['Balance'];

/**
 * The creator's money as the processor reports it: the balance (GET /payouts/balance), the
 * payout schedule and, when it is manual, the form that asks for a payout; the payouts with
 * their states; and the way to the processor's own dashboard, where the schedule and the bank
 * account are changed (this API cannot change them).
 */
export function Money({ route }: { route: Route }) {
  const balance = useLoad(async () => ok(await api.GET('/api/v1/payouts/balance')).data, []);
  const account = useLoad(async () => ok(await api.GET('/api/v1/account')).data, []);
  // Only for the fee's percentage in the identity line; the screen stands without it.
  const fee = useLoad(async () => ok(await api.GET('/api/v1/creator-metrics')).data.platform_fee_pct, []);
  const [payoutsVersion, setPayoutsVersion] = useState(0);

  return (
    <>
      <h1>Money</h1>
      <p class="identity">
        What a member pays (gross) = what you keep + the platform fee{fee.data !== undefined ? ` (${fee.data} %)` : ''}. Every amount on this page is what
        you keep.
      </p>
      <Show result={balance} label="your balance">
        {(b) => <Figures balance={b} />}
      </Show>
      <Show result={account} label="your payout schedule">
        {(a) => (
          <Schedule
            account={a}
            balance={balance.data}
            onPaidOut={() => {
              balance.reload();
              setPayoutsVersion((n) => n + 1);
            }}
          />
        )}
      </Show>
      <Payouts route={route} version={payoutsVersion} />
    </>
  );
}

function Figures({ balance: b }: { balance: Balance }) {
  const cash = (cents: number) => money(cents, b.currency);
  return (
    <section class="stats" aria-label="Your balance">
      <Stat testId="balance-available" label="Available to pay out" value={cash(b.available_cents)} hint="at the processor, now" />
      <Stat testId="balance-pending" label="Pending" value={cash(b.pending_cents)} hint="charged, not yet available" />
      <Stat testId="balance-month" label="Received this month" value={cash(b.this_month_received_cents)} hint="refunds deducted" />
      <Stat testId="balance-all-time" label="Received all time" value={cash(b.all_time_cents)} hint="refunds deducted" />
    </section>
  );
}

const WEEKDAY: Record<string, string> = {
  monday: 'Mondays',
  tuesday: 'Tuesdays',
  wednesday: 'Wednesdays',
  thursday: 'Thursdays',
  friday: 'Fridays',
  saturday: 'Saturdays',
  sunday: 'Sundays',
};

/** The schedule in words: "Automatic, weekly on Mondays", "Manual: you ask for each payout". */
function scheduleText(a: Account): string {
  const anchor = a.payout_schedule_anchor;
  switch (a.payout_schedule) {
    case 'manual':
      return 'Manual: you ask for each payout below.';
    case 'daily':
      return 'Automatic, every day.';
    case 'weekly':
      return `Automatic, weekly${anchor.weekly_anchor ? ` on ${WEEKDAY[anchor.weekly_anchor]}` : ''}.`;
    case 'monthly':
      return `Automatic, monthly${anchor.monthly_anchor ? ` on day ${anchor.monthly_anchor}` : ''}.`;
  }
}

function Schedule({ account: a, balance, onPaidOut }: { account: Account; balance: Balance | undefined; onPaidOut: () => void }) {
  return (
    <Card title="Payouts to your bank" class="schedule">
      <dl class="facts">
        <dt>Schedule</dt>
        <dd data-testid="payout-schedule">{scheduleText(a)}</dd>
        {balance?.next_auto_payout_at ? (
          <>
            <dt>Next payout</dt>
            <dd>{dateTime(balance.next_auto_payout_at)}</dd>
          </>
        ) : null}
        {!a.payouts_enabled ? (
          <>
            <dt>Payouts</dt>
            <dd>Paused by the processor until your account is complete (see the payments account on the overview).</dd>
          </>
        ) : null}
      </dl>
      {a.payout_schedule === 'manual' && balance ? <ManualPayout balance={balance} onDone={onPaidOut} /> : null}
      <ProcessorDashboard />
    </Card>
  );
}

/** The processor's dashboard: single-use links, so one is fetched on click and opened at once. */
function ProcessorDashboard() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [onboarding, setOnboarding] = useState(false);
  async function open() {
    setBusy(true);
    setError(undefined);
    setOnboarding(false);
    try {
      const { url } = ok(await api.POST('/api/v1/account/dashboard-link')).data;
      if (url) location.assign(url);
      else setError('The processor gave no link this time: try again.');
    } catch (err) {
      setError(withoutRoutes(messageOf(err)));
      setOnboarding(err instanceof ApiError && err.code === 'onboarding_required');
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="processor">
      <p class="hint">Change the payout schedule or the bank account in the processor's dashboard.</p>
      <div class="actions">
        <button type="button" data-testid="processor-dashboard" disabled={busy} aria-busy={busy} onClick={open}>
          {busy ? 'Opening…' : 'Open the processor dashboard'}
        </button>
      </div>
      {error ? <ErrorMessage message={error} /> : null}
      {onboarding ? (
        <p>
          <a href={href('overview')}>Set up payments from the overview</a>.
        </p>
      ) : null}
    </div>
  );
}

/** The API's message without the route it names for developers ("(POST /api/v1/…)"). */
const withoutRoutes = (message: string) => message.replace(/ \((?:GET|POST|PATCH|DELETE) \/api\/[^)]*\)/g, '');
