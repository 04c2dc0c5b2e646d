import { api, ok } from '../api/client.js';
import { href, navigate, type Route } from '../router.js';
import { count, date } from '../format.js';
import { Show, useLoad } from '../ui/load.js';
import { heatShade } from '../ui/heat.js';
import { Card, Empty, Field, valueOf } from '../ui/parts.js';

type Period = 'week' | 'month';

/**
 * Retention by cohort (GET /creator-metrics/cohorts): one row per cohort of members who first
 * subscribed in a week or month, one cell per period after, shaded by the share still
 * subscribed. The cell's text carries the figure, so the colour is never the only signal.
 */
export function Retention({ route }: { route: Route }) {
  const period: Period = route.query.get('period') === 'week' ? 'week' : 'month';
  const periods = clamp(Number(route.query.get('periods') ?? 12));
  const community = route.query.get('community') ?? '';
  const set = (next: { period?: Period; periods?: number; community?: string }) =>
    navigate('retention', { period: next.period ?? period, periods: next.periods ?? periods, community: next.community ?? community });
  const communities = useLoad(async () => ok(await api.GET('/api/v1/communities', { params: { query: { page: 1, limit: 100 } } })).data, []);
  const cohorts = useLoad(async () => {
    const query = { period, periods, ...(community ? { community_id: community } : {}) };
    return ok(await api.GET('/api/v1/creator-metrics/cohorts', { params: { query } })).data;
  }, [period, periods, community]);

  return (
    <>
      <h1>Retention</h1>
      <Card>
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <Field id="cohort-period" label="Cohorts by">
            <select id="cohort-period" value={period} onChange={(e) => set({ period: valueOf(e) as Period })}>
              <option value="month">Month</option>
              <option value="week">Week</option>
            </select>
          </Field>
          <Field id="cohort-periods" label="How many cohorts">
            <select id="cohort-periods" value={periods} onChange={(e) => set({ periods: Number(valueOf(e)) })}>
              {[3, 6, 12, 18, 24].map((n) => (
                <option value={n}>{n}</option>
              ))}
            </select>
          </Field>
          <Field id="cohort-community" label="Community">
            <select id="cohort-community" value={community} onChange={(e) => set({ community: valueOf(e) })}>
              <option value="">All communities</option>
              {(communities.data ?? []).map((c) => (
                <option value={c.id}>{c.name}</option>
              ))}
            </select>
          </Field>
        </form>
      </Card>
      <Show result={cohorts} label="the cohorts">
        {(data) =>
          data.cohorts.every((c) => c.size === 0) ? (
            <Card>
              <Empty>
                No members joined in these {period === 'week' ? 'weeks' : 'months'} yet. <a href={href('retention', { period, periods: 24, community })}>Look further back</a>.
              </Empty>
            </Card>
          ) : (
            <Card title={`Share of each ${period}'s new members still subscribed`}>
              <Heatmap period={period} cohorts={data.cohorts} />
              <p class="hint">
                Each row is the members who first subscribed in that {period}; each column, the end of a later {period}. The first column is always 100 %;
                the newest {period} is measured as of now.
              </p>
            </Card>
          )
        }
      </Show>
    </>
  );
}

const clamp = (n: number) => (Number.isInteger(n) && n >= 1 && n <= 24 ? n : 12);

type Cohort = { cohort_start: string; size: number; retention_pct: number[] };

function Heatmap({ period, cohorts }: { period: Period; cohorts: Cohort[] }) {
  const width = Math.max(...cohorts.map((c) => c.retention_pct.length), 1);
  const unit = period === 'week' ? 'Week' : 'Month';
  return (
    <div class="table-wrap" role="region" aria-label="Retention by cohort" tabIndex={0}>
      <table class="heat">
        <caption class="sr-only">Percent of each cohort still subscribed at the end of each later {period}</caption>
        <thead>
          <tr>
            <th scope="col">Cohort</th>
            <th scope="col">Members</th>
            {Array.from({ length: width }, (_, k) => (
              <th scope="col">
                {unit} {k}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {[...cohorts].reverse().map((c) => (
            <tr data-testid="cohort-row">
              <th scope="row">{period === 'week' ? `Week of ${date(c.cohort_start)}` : monthOf(c.cohort_start)}</th>
              <td>{count(c.size)}</td>
              {Array.from({ length: width }, (_, k) => {
                const pct = c.retention_pct[k];
                return pct === undefined ? <td /> : <td style={heatShade(pct)}>{pct.toFixed(1)} %</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const monthOf = (iso: string) => new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(iso));
