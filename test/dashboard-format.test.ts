import { describe, expect, it } from 'vitest';
import { dateTime, nearTime } from '../dashboard/src/format.js';

/** The dashboard's time formatter (pure, no browser): near times in seconds and minutes, the rest as a date and time. */
describe("the dashboard's nearTime", () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  const at = (ms: number) => new Date(now + ms).toISOString();
  const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });

  it('reads a time below a minute away in seconds, either side of now', () => {
    expect(nearTime(at(5_000), now)).toBe(rtf.format(5, 'second'));
    expect(nearTime(at(-12_000), now)).toBe(rtf.format(-12, 'second'));
    expect(nearTime(at(400), now)).toBe(rtf.format(0, 'second'));
  });

  it('reads a time below an hour away in minutes, from the second that rounds to a minute', () => {
    expect(nearTime(at(59_600), now)).toBe(rtf.format(1, 'minute'));
    expect(nearTime(at(-25 * 60_000), now)).toBe(rtf.format(-25, 'minute'));
    expect(nearTime(at(59 * 60_000), now)).toBe(rtf.format(59, 'minute'));
  });

  it('reads an hour or more away as the date and time, and nothing as a dash', () => {
    expect(nearTime(at(3_600_000), now)).toBe(dateTime(at(3_600_000)));
    expect(nearTime(at(-2 * 86_400_000), now)).toBe(dateTime(at(-2 * 86_400_000)));
    expect(nearTime(null, now)).toBe('—');
  });
});
