import type { DirectoryRow } from './directory.repo.js';
import { presentMember } from './directory.service.js';

/** The export's columns, in order (documented on GET /members/export.csv). */
const COLUMNS = ['id', 'name', 'email', 'avatar_url', 'status', 'joined_at', 'last_active_at', 'workouts_completed_30d', 'posts_count_30d', 'streak_days', 'tiers'] as const;

/**
 * One CSV field (RFC 4180). A cell a spreadsheet would run as a formula (OWASP "CSV
 * injection": a leading =, +, -, @, tab or carriage return) is prefixed with a quote mark,
 * which spreadsheets show as text; then a field holding a comma, quote or line break is quoted,
 * its quotes doubled.
 */
export function csvField(value: string | number | null): string {
  let text = value === null ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const line = (fields: Array<string | number | null>) => `${fields.map(csvField).join(',')}\r\n`;

export const csvHeader = (): string => line([...COLUMNS]);

export function csvRows(rows: DirectoryRow[]): string {
  return rows
    .map((row) => {
      const m = presentMember(row);
      return line([
        m.id,
        m.name,
        m.email,
        m.avatar_url,
        row.status,
        row.joined_at,
        m.engagement.last_active_at,
        m.engagement.workouts_completed_30d,
        m.engagement.posts_count_30d,
        m.engagement.streak_days,
        m.subscriptions.map((s) => `${s.tier_name}: ${s.status}`).join('; '),
      ]);
    })
    .join('');
}
