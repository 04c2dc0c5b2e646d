import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';

export interface Series {
  label: string;
  values: number[];
  color: string;
  /** Bars instead of a line (counts per day). */
  bars?: boolean;
  format?: (n: number) => string;
  /** Shorter labels for the axis ticks (e.g. R$2.6K), when the full format is too wide. */
  axis?: (n: number) => string;
}

/**
 * A time chart drawn by uPlot (~45 KB: the only charting library small enough for the
 * budget). It follows its container's width, so it fits a phone and a desktop; the figures
 * it draws are also given as a text summary for screen readers (`summary`).
 */
export function TimeChart({ days, series, summary, height = 220 }: { days: string[]; series: Series[]; summary: string; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const bars = uPlot.paths.bars?.({ size: [0.7, 24] });
    const plot = new uPlot(
      {
        width: Math.max(240, el.clientWidth),
        height,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true } },
        axes: [{ stroke: '#444' }, { stroke: '#444', size: 70, values: (_u, ticks) => ticks.map((t) => (series[0]?.axis ?? series[0]?.format ?? String)(t)) }],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            ...(s.bars && bars ? { paths: bars, fill: `${s.color}cc` } : {}),
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : (s.format ?? String)(v)),
          })),
        ],
      },
      [xs, ...series.map((s) => s.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(240, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, series, height]);
  return (
    <figure class="chart">
      <div ref={box} aria-hidden="true" />
      <figcaption class="sr-only">{summary}</figcaption>
    </figure>
  );
}
