/**
 * A heatmap cell's colours: blue by share (lighter for less), and the text colour that reads on
 * it. The text is white or black, whichever contrasts more with the cell: the two cross at a
 * relative luminance of ~0.18, where each gives ~4.6:1, so every share meets WCAG AA (4.5:1).
 * A fixed switch by lightness (white below 60 %) left white on mid blues at ~3.8:1.
 */
export function heatShade(pct: number): { background: string; color: string } {
  const share = Math.min(Math.max(pct, 0), 100) / 100;
  const rgb = hslToRgb(221 / 360, 0.7, (96 - share * 62) / 100);
  const l = relativeLuminance(rgb);
  const onWhite = 1.05 / (l + 0.05);
  const onBlack = (l + 0.05) / 0.05;
  return { background: `#${rgb.map((c) => Math.round(c * 255).toString(16).padStart(2, '0')).join('')}`, color: onWhite >= onBlack ? '#fff' : '#000' };
}

/** HSL (each 0–1) to sRGB channels (0–1). */
function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const channel = (t: number) => {
    const u = t < 0 ? t + 1 : t > 1 ? t - 1 : t;
    if (u < 1 / 6) return p + (q - p) * 6 * u;
    if (u < 1 / 2) return q;
    if (u < 2 / 3) return p + (q - p) * (2 / 3 - u) * 6;
    return p;
  };
  return [channel(h + 1 / 3), channel(h), channel(h - 1 / 3)];
}

/** WCAG 2's relative luminance of an sRGB colour. */
function relativeLuminance([r, g, b]: readonly number[]): number {
  const linear = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * linear(r!) + 0.7152 * linear(g!) + 0.0722 * linear(b!);
}
