import { describe, expect, it } from 'vitest';
import { heatShade } from '../dashboard/src/ui/heat.js';

/** WCAG 2's contrast ratio of two #rrggbb / #rgb colours, written here apart from the module it checks. */
function contrast(a: string, b: string): number {
  const lum = (hex: string) => {
    const h = hex.length === 4 ? [...hex.slice(1)].map((c) => c + c).join('') : hex.slice(1);
    const [r, g, bl] = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe("the retention heatmap's cell colours", () => {
  it('keeps the text at 4.5:1 or more against its cell for every share from 0 to 100 %, mid blues included', () => {
    const worst = Array.from({ length: 1001 }, (_, i) => i / 10).reduce(
      (low, pct) => {
        const { background, color } = heatShade(pct);
        const ratio = contrast(background, color);
        return ratio < low.ratio ? { pct, ratio } : low;
      },
      { pct: -1, ratio: Infinity },
    );
    expect(worst.ratio, `share ${worst.pct} %`).toBeGreaterThanOrEqual(4.5);
  });

  it('is darker for a larger share, with white text on the darkest cells and black on the lightest', () => {
    expect(heatShade(100).color).toBe('#fff');
    expect(heatShade(0).color).toBe('#000');
    expect(contrast(heatShade(100).background, '#fff')).toBeGreaterThan(contrast(heatShade(50).background, '#fff'));
    expect(contrast(heatShade(50).background, '#fff')).toBeGreaterThan(contrast(heatShade(0).background, '#fff'));
  });
});
