/**
 * How members see each other (leaderboards, comments): first name and the initial of the
 * last (DESIGN §7). "Maria Silva" → "Maria S.", "Ana Beatriz Costa" → "Ana C.", "Cher" →
 * "Cher". The initial is a whole code point, so "Ana Ólafsdóttir" → "Ana Ó.".
 */
export function abbreviate(name: string): string {
  const parts = name.trim().split(/\s+/u);
  if (parts.length < 2) return parts[0] ?? '';
  return `${parts[0]} ${Array.from(parts[parts.length - 1]!)[0]}.`;
}
