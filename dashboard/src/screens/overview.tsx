import { useMemo, useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { CreatorMetrics, HistoryDay } from '../api/types.js';
import { count, date, daysAgo, money, moneyShort, percent, signed } from '../format.js';
import { TimeChart } from '../ui/chart.js';
import { Show, useLoad } from '../ui/load.js';
import { Card, Stat, Table } from '../ui/parts.js';
import { AccountCard } from './account-card.js';

const WINDOWS = [30, 90, 365] as const;
type Window = (typeof WINDOWS)[number];

/**
 * The creator's figures, each as GET /creator-metrics computes it (no figure is computed
 * twice), with its change over the chosen window from GET /creator-metrics/history, the
 * charts of that history, the tier mix and the account's state.
 */
export function Overview() {
  const [window, setWindow] = useState<Window>(30);
  const summary = useLoad(async () => {
    const [metrics, balance] = await Promise.all([ok(await api.GET('/api/v1/creator-metrics')), ok(await api.GET('/api/v1/payouts/balance'))]);
    return { metrics: metrics.data, currency: balance.data.currency };
  }, []);
  const history = useLoad(async () => {
    const query = { from: daysAgo(window - 1), to: daysAgo(0) };
    return ok(await api.GET('/api/v1/creator-metrics/history', { params: { query } })).data.days;
  }, [window]);

  return (
    <>
      <div class="page-head">
        <h1>Overview</h1>
        <fieldset class="segmented">
          <legend class="sr-only">Window</legend>
          {WINDOWS.map((w) => (
            <label class={w === window ? 'on' : ''}>
              <input type="radio" name="window" value={w} checked={w === window} onChange={() => setWindow(w)} />
              {w} days
            </label>
          ))}
        </fieldset>
      </div>
      <AccountCard />
      <Show result={summary} label="your figures">
        {({ metrics, currency }) => (
          <>
            <Figures metrics={metrics} currency={currency} days={history.data} window={window} />
            <Show result={history} label="the history">
              {(days) => <Charts days={days} currency={currency} window={window} />}
            </Show>
            <TierMix metrics={metrics} currency={currency} />
          </>
        )}
      </Show>
    </>
  );
}

/** The change of a figure from the window's first day to now (the summary's own value). */
function change(days: HistoryDay[] | undefined, now: number, pick: (d: HistoryDay) => number, show: (n: number) => string) {
  const first = days?.[0];
  if (!first) return undefined;
  const delta = now - pick(first);
  return { text: `${signed(delta, show)} since ${date(`${first.day}T12:00:00Z`)}`, sign: Math.sign(delta) };
}

function Figures({ metrics: m, currency, days, window }: { metrics: CreatorMetrics; currency: string; days: HistoryDay[] | undefined; window: Window }) {
  const cash = (n: number) => money(n, currency);
  const points = (n: number) => `${(n * 100).toFixed(1)} pts`;
  return (
    <section class="stats" aria-label={`Your figures, with their change over ${window} days`}>
      <Stat testId="mrr" label="MRR" value={cash(m.mrr_cents)} change={change(days, m.mrr_cents, (d) => d.mrr_cents, cash)} hint="gross, before the platform fee" />
      <Stat testId="paying" label="Paying members" value={count(m.active_subscribers)} change={change(days, m.active_subscribers, (d) => d.active_subscribers, count)} />
      <Stat testId="trialing" label="Trialing" value={count(m.trialing)} change={change(days, m.trialing, (d) => d.trialing, count)} />
      <Stat testId="churn" label="Churn, 30 days" value={percent(m.churn_rate_30d)} change={change(days, m.churn_rate_30d, (d) => d.churn_rate_30d, points)} good="down" />
      <Stat testId="engagement" label="Engagement, 30 days" value={percent(m.engagement_rate_30d)} hint="members active in the last 30 days" />
      <Stat testId="revenue" label="Revenue this month" value={cash(m.this_month_revenue_cents)} hint={`gross, refunds deducted; you keep ${100 - m.platform_fee_pct} %`} />
      <Stat
        testId="growth"
        label="Net growth, 30 days"
        value={signed(m.growth_30d.net_growth)}
        hint={`${count(m.growth_30d.new_subscribers)} new, ${count(m.growth_30d.lost_subscribers)} lost`}
      />
    </section>
  );
}

function Charts({ days, currency, window }: { days: HistoryDay[]; currency: string; window: Window }) {
  const labels = useMemo(() => days.map((d) => d.day), [days]);
  const cash = (n: number) => money(n, currency);
  const mrr = useMemo(() => [{ label: 'MRR', values: days.map((d) => d.mrr_cents), color: '#1d4ed8', format: cash, axis: (n: number) => moneyShort(n, currency) }], [days, currency]);
  const members = useMemo(
    () => [
      { label: 'Paying', values: days.map((d) => d.active_subscribers), color: '#047857' },
      { label: 'Trialing', values: days.map((d) => d.trialing), color: '#b45309' },
    ],
    [days],
  );
  const flow = useMemo(
    () => [
      { label: 'New', values: days.map((d) => d.new_subscribers), color: '#047857', bars: true },
      { label: 'Lost', values: days.map((d) => -d.lost_subscribers), color: '#b91c1c', bars: true, format: (n: number) => String(Math.abs(n)) },
    ],
    [days],
  );
  if (days.length === 0) return <Card title="History">No subscriptions yet: the charts start with your first member.</Card>;
  const last = days[days.length - 1]!;
  const gained = days.reduce((n, d) => n + d.new_subscribers, 0);
  const lost = days.reduce((n, d) => n + d.lost_subscribers, 0);
  return (
    <div class="charts">
      <Card title={`MRR, last ${window} days`}>
        <TimeChart days={labels} series={mrr} summary={`MRR went from ${cash(days[0]!.mrr_cents)} on ${days[0]!.day} to ${cash(last.mrr_cents)} on ${last.day}.`} />
      </Card>
      <Card title={`Members, last ${window} days`}>
        <TimeChart days={labels} series={members} summary={`${count(last.active_subscribers)} paying and ${count(last.trialing)} trialing on ${last.day}.`} />
      </Card>
      <Card title={`New and lost members per day, last ${window} days`}>
        <TimeChart days={labels} series={flow} summary={`${count(gained)} members joined and ${count(lost)} left in the last ${window} days.`} />
      </Card>
    </div>
  );
}

function TierMix({ metrics, currency }: { metrics: CreatorMetrics; currency: string }) {
  const total = metrics.mrr_cents || 1;
  return (
    <Card title="Tier mix">
      <Table caption="Paying members and MRR by tier" head={['Tier', 'Paying members', 'MRR', 'Share of MRR']}>
        {metrics.tier_mix.map((t) => (
          <tr>
            <th scope="row">{t.name}</th>
            <td>{count(t.members)}</td>
            <td>{money(t.mrr_cents, currency)}</td>
            <td>
              <span class="share">
                <span class="share-bar" style={{ width: `${(t.mrr_cents / total) * 100}%` }} />
                {percent(t.mrr_cents / total)}
              </span>
            </td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}
