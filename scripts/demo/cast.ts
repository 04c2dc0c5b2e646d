/**
 * Who is in the demo and what happens to them: pure data and a plan drawn from a seeded
 * random generator, so a run is reproducible from its seed (printed in the summary) and two
 * runs make two different creators.
 */

export type Rng = () => number;

/** mulberry32: small, fast, good enough to shuffle names. */
export function rngOf(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;

export function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export const CREATORS = [
  { name: 'Marina Duarte', brand: 'Marina Duarte Treinamento' },
  { name: 'Rafael Nogueira', brand: 'Rafa Nogueira Coaching' },
  { name: 'Camila Ferraz', brand: 'Camila Ferraz Performance' },
  { name: 'Thiago Albuquerque', brand: 'Thiago Albuquerque Strength' },
] as const;

const FIRST = [
  'Ana', 'Beatriz', 'Bruno', 'Caio', 'Carla', 'Daniela', 'Diego', 'Eduarda', 'Felipe', 'Fernanda', 'Gabriel', 'Giovana',
  'Gustavo', 'Helena', 'Igor', 'Isabela', 'João', 'Juliana', 'Larissa', 'Leonardo', 'Letícia', 'Lucas', 'Luiza', 'Marcos',
  'Mariana', 'Matheus', 'Natália', 'Otávio', 'Paula', 'Pedro', 'Rafaela', 'Renato', 'Sofia', 'Tatiana', 'Vinícius', 'Yasmin',
];
const LAST = [
  'Silva', 'Santos', 'Oliveira', 'Souza', 'Rodrigues', 'Ferreira', 'Alves', 'Pereira', 'Lima', 'Gomes', 'Costa', 'Ribeiro',
  'Martins', 'Carvalho', 'Almeida', 'Lopes', 'Soares', 'Fernandes', 'Vieira', 'Barbosa', 'Rocha', 'Dias', 'Nascimento', 'Moreira',
];
/** Members from abroad: the creator's audience is not only Brazilian. */
const INTERNATIONAL = [
  'Emma Johnson', 'Liam O\'Connor', 'Sofía Martínez', 'Mateo García', 'Chloé Dubois', 'Lukas Müller', 'Aiko Tanaka',
  'Noah Williams', 'Giulia Rossi', 'Olivia Brown', 'Ines Carvalho Pinto', 'Kwame Mensah',
];

/** `count` distinct full names: mostly Brazilian (some with two surnames), about one in six from abroad. */
export function memberNames(rng: Rng, count: number): string[] {
  const names = new Set<string>(shuffled(rng, INTERNATIONAL).slice(0, Math.round(count / 6)));
  while (names.size < count) {
    const [a, b] = shuffled(rng, LAST);
    const last = rng() < 0.3 ? `${a} ${b}` : a!;
    names.add(`${pick(rng, FIRST)} ${last}`);
  }
  return shuffled(rng, [...names]);
}

export const emailOf = (name: string, tag: string) =>
  `${name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z]+/g, '.')
    .replace(/^\.|\.$/g, '')}+${tag}@example.com`;

export type TierKey = 'essencial' | 'essencialTrimestral' | 'elite' | 'eliteAnual' | 'corredor';

export const TIERS: Record<TierKey, { community: 'main' | 'run'; name: string; price_cents: number; billing_period: 'monthly' | 'quarterly' | 'yearly'; trial_days?: number; level?: number; benefits: string[] }> = {
  essencial: { community: 'main', name: 'Essencial', price_cents: 4990, billing_period: 'monthly', trial_days: 7, level: 1, benefits: ['Programas de treino', 'Comunidade e desafios'] },
  essencialTrimestral: { community: 'main', name: 'Essencial Trimestral', price_cents: 13470, billing_period: 'quarterly', level: 1, benefits: ['Tudo do Essencial', '10% de desconto'] },
  elite: { community: 'main', name: 'Elite', price_cents: 11990, billing_period: 'monthly', level: 2, benefits: ['Tudo do Essencial', 'Vídeos de técnica', 'Feedback mensal'] },
  eliteAnual: { community: 'main', name: 'Elite Anual', price_cents: 119900, billing_period: 'yearly', level: 2, benefits: ['Tudo do Elite', 'Dois meses grátis'] },
  corredor: { community: 'run', name: 'Corredor', price_cents: 2990, billing_period: 'monthly', benefits: ['Planilhas de corrida', 'Grupo de treino'] },
};

/** What becomes of a member by the end of the story. */
export type Fate =
  | { kind: 'stays' }
  | { kind: 'trialing' }
  | { kind: 'past_due' }
  | { kind: 'cancels_at_period_end'; atDay: number }
  | { kind: 'churns_on_failed_payments'; failDay: number }
  | { kind: 'canceled_now'; atDay: number; refund: boolean }
  | { kind: 'canceled_at_period_end_long_ago'; atDay: number };

export interface Cast {
  name: string;
  email: string;
  tier: TierKey;
  /** Day of the story (0 = six months ago) the member subscribes. */
  joinDay: number;
  fate: Fate;
  /** Takes part: logs workouts (in the main community) and reacts to posts; else quiet, at risk once their first two weeks are over. */
  trains: boolean;
  /** Pays with a declined card first, then with a good one. */
  declinedFirst: boolean;
  /** Working weight multiplier: members are not equally strong. */
  strength: number;
}

export const STORY_DAYS = 182;

/**
 * Fifty members: who joins which tier when, and what becomes of them. The counts are fixed
 * (the sanity check relies on every status being present); names, days and who trains vary.
 */
export function planCast(rng: Rng, tag: string): Cast[] {
  const names = memberNames(rng, 50);
  const plans: Array<Omit<Cast, 'name' | 'email' | 'strength' | 'declinedFirst'>> = [];
  const add = (n: number, tier: TierKey, fate: () => Fate, day: () => number, trains: () => boolean) => {
    for (let i = 0; i < n; i++) plans.push({ tier, fate: fate(), joinDay: day(), trains: trains() });
  };
  const between = (a: number, b: number) => () => a + Math.floor(rng() * (b - a + 1));
  const often = (p: number) => () => rng() < p;
  const stays = (): Fate => ({ kind: 'stays' });
  // Paying and staying, across the four tiers of the main community.
  add(13, 'essencial', stays, between(0, 160), often(0.75));
  add(6, 'essencialTrimestral', stays, between(0, 150), often(0.8));
  add(6, 'elite', stays, between(0, 160), often(0.9));
  add(4, 'eliteAnual', stays, between(0, 120), () => true);
  // In their trial (7 days on Essencial).
  add(4, 'essencial', () => ({ kind: 'trialing' }), between(STORY_DAYS - 6, STORY_DAYS - 1), often(0.5));
  // Card failing at the last renewal: past_due now (joined so that a renewal fell 2 to 5 days ago).
  add(2, 'essencial', () => ({ kind: 'past_due' }), () => -1, () => true);
  add(1, 'elite', () => ({ kind: 'past_due' }), () => -1, () => false);
  // Asked to leave at the end of the period, recently.
  add(2, 'essencial', () => ({ kind: 'cancels_at_period_end', atDay: STORY_DAYS - 4 }), between(20, 120), often(0.5));
  add(1, 'elite', () => ({ kind: 'cancels_at_period_end', atDay: STORY_DAYS - 2 }), between(20, 120), () => true);
  // Churned: cards that kept failing, cancellations (one with a refund), an old period-end cancellation.
  add(2, 'essencial', () => ({ kind: 'churns_on_failed_payments', failDay: between(70, 130)() }), between(0, 40), () => false);
  add(1, 'elite', () => ({ kind: 'churns_on_failed_payments', failDay: between(90, 140)() }), between(10, 50), () => false);
  add(1, 'elite', () => ({ kind: 'canceled_now', atDay: between(100, 150)(), refund: true }), between(30, 60), () => false);
  add(1, 'essencialTrimestral', () => ({ kind: 'canceled_now', atDay: between(110, 160)(), refund: false }), between(20, 80), () => false);
  add(2, 'essencial', () => ({ kind: 'canceled_at_period_end_long_ago', atDay: between(60, 110)() }), between(0, 30), () => false);
  // The running community, paused at the end: its members are set to leave at period end. They
  // have no programs to log, but read and cheer the running posts.
  add(4, 'corredor', stays, between(30, 170), () => true);
  return plans.map((p, i) => ({
    ...p,
    name: names[i]!,
    email: emailOf(names[i]!, tag),
    strength: 0.7 + rng() * 0.7,
    declinedFirst: i === 3,
  }));
}
