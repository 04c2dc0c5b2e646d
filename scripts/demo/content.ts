import { pick, shuffled, STORY_DAYS } from './cast.js';
import { eventually, inParallel } from './http.js';
import { DAY, memberClient, type Member, type World } from './story.js';

type Prescription = [slug: string, sets: number, reps: string, loadKg: number | null];
const PROGRAMS: Array<{ name: string; description: string; level: string; goal: string; weeks: number; perWeek: number; workouts: Array<[string, Prescription[]]> }> = [
  {
    name: 'Hipertrofia 12 Semanas',
    description: 'Divisão ABC com progressão de carga semanal.',
    level: 'intermediate',
    goal: 'hypertrophy',
    weeks: 12,
    perWeek: 3,
    workouts: [
      ['Treino A — Peito, ombros e tríceps', [['barbell-bench-press', 4, '8-10', 60], ['incline-dumbbell-bench-press', 3, '10-12', 22], ['seated-dumbbell-shoulder-press', 3, '10', 18], ['rope-triceps-pushdown', 3, '12', 25]]],
      ['Treino B — Costas e bíceps', [['lat-pulldown', 4, '10', 55], ['barbell-bent-over-row', 4, '8', 60], ['seated-cable-row', 3, '12', 50], ['barbell-curl', 3, '10', 30]]],
      ['Treino C — Pernas', [['barbell-back-squat', 4, '6-8', 80], ['barbell-romanian-deadlift', 3, '8', 70], ['leg-press', 3, '12', 160], ['standing-calf-raise', 4, '15', 60]]],
    ],
  },
  {
    name: 'Força Base',
    description: 'Cinco séries de cinco nos básicos, duas vezes por semana, para quem está começando.',
    level: 'beginner',
    goal: 'strength',
    weeks: 8,
    perWeek: 2,
    workouts: [
      ['Dia 1', [['barbell-back-squat', 5, '5', 60], ['barbell-bench-press', 5, '5', 45], ['barbell-bent-over-row', 5, '5', 40]]],
      ['Dia 2', [['barbell-deadlift', 3, '5', 80], ['barbell-overhead-press', 5, '5', 30], ['chin-up', 3, '6', null]]],
    ],
  },
];

interface Workout {
  id: string;
  plan: Prescription[];
  exerciseIds: string[];
}

/** Two programs built from the exercise catalog. */
export async function createPrograms(w: World): Promise<Workout[]> {
  const slugs = [...new Set(PROGRAMS.flatMap((p) => p.workouts.flatMap(([, ex]) => ex.map((e) => e[0]))))];
  const bySlug = new Map<string, string>();
  for (let page = 1; ; page++) {
    const found = await w.creator.get<Array<{ id: string; slug: string }>>(`/api/v1/exercises?limit=100&page=${page}`);
    for (const e of found) bySlug.set(e.slug, e.id);
    if (found.length < 100) break;
  }
  const missing = slugs.filter((slug) => !bySlug.has(slug));
  if (missing.length) throw new Error(`exercises not in the catalog: ${missing.join(', ')}`);
  const workouts: Workout[] = [];
  for (const p of PROGRAMS) {
    const program = await w.creator.post<{ id: string }>('/api/v1/workout-programs', {
      community_id: w.communities.main,
      name: p.name,
      description: p.description,
      duration_weeks: p.weeks,
      frequency_per_week: p.perWeek,
      level: p.level,
      goal: p.goal,
    });
    for (const [name, plan] of p.workouts) {
      const exercises = plan.map(([slug, sets, reps, load]) => ({ exercise_id: bySlug.get(slug)!, sets, reps, load_kg: load, rest_sec: 90 }));
      const workout = await w.creator.post<{ id: string }>(`/api/v1/workout-programs/${program.id}/workouts`, { name, exercises });
      workouts.push({ id: workout.id, plan, exerciseIds: exercises.map((e) => e.exercise_id) });
    }
  }
  w.log(`programs: ${PROGRAMS.length}, workouts: ${workouts.length}`);
  return workouts;
}

const roundTo = (x: number, step: number) => Math.max(step, Math.round(x / step) * step);

/**
 * Members who train log their last weeks (performed_at in the past: the service records the
 * time a workout was done as the member says), with loads that creep up, so PRs appear. The
 * running challenge is joined first, so the logs move its leaderboard.
 */
export async function train(w: World, members: Member[], workouts: Workout[], challengeId: string): Promise<{ logs: number; prs: number }> {
  const nowMs = Date.now();
  let logs = 0;
  let prs = 0;
  const trainers = members.filter((m) => m.cast.trains && m.cast.tier !== 'corredor');
  // A few members at a time, each one's workouts in order (PRs are judged against earlier sets).
  await inParallel(trainers, 3, async (m) => {
    const api = memberClient(w, m);
    await api.post(`/api/v1/member/challenges/${challengeId}/join`);
    // The story ends now, so a processor time maps to the wall clock by its distance from the end.
    const joinedMs = nowMs - (w.start + STORY_DAYS * DAY - (m.joinedAt ?? w.start)) * 1000;
    let at = Math.max(joinedMs, nowMs - 42 * DAY * 1000) + 3600_000 * (7 + w.rng() * 4);
    const program = w.rng() < 0.65 ? workouts.slice(0, 3) : workouts.slice(3);
    for (let session = 0; at < nowMs - 2 * 3600_000; session++) {
      const workout = program[session % program.length]!;
      // One plate step up every third time through the program: PRs come with the step-ups.
      const progress = 1 + 0.04 * Math.floor(session / program.length / 3);
      const sets = workout.plan.flatMap(([, count, reps, load], i) =>
        Array.from({ length: Math.min(count, 3) }, (_, k) => ({
          exercise_id: workout.exerciseIds[i]!,
          reps: Number(reps.split('-').at(-1)) - (k === 2 ? 1 : 0),
          load_kg: load === null ? 0 : roundTo(load * m.cast.strength * progress, 2.5),
        })),
      );
      const log = await api.post<{ prs: unknown[] }>('/api/v1/member/workout-logs', { workout_id: workout.id, performed_at: new Date(at).toISOString(), sets });
      logs++;
      prs += log.prs.length;
      // Two to four days later, in the morning or the evening.
      at += (2 + Math.floor(w.rng() * 3)) * DAY * 1000 + (w.rng() < 0.5 ? -3 : 3) * 3600_000 * w.rng();
    }
  });
  w.log(`workouts logged: ${logs} by ${trainers.length} members, ${prs} personal records`);
  return { logs, prs };
}

/** A 30-day consistency challenge that started 12 days ago. */
export async function createChallenge(w: World): Promise<string> {
  const start = new Date(Date.now() - 12 * DAY * 1000);
  start.setUTCHours(0, 0, 0, 0);
  const challenge = await w.creator.post<{ id: string }>('/api/v1/challenges', {
    community_id: w.communities.main,
    name: 'Desafio Constância 30 Dias',
    description: 'Quem treinar mais vezes em 30 dias ganha um mês de Elite.',
    metric: 'workouts_count',
    duration_days: 30,
    starts_at: start.toISOString(),
  });
  return challenge.id;
}

const COMMENTS = [
  'Que aula! Ajustei a pegada e senti muito mais o peitoral.',
  'Hoje bati meu recorde no agachamento 💪',
  'Dá pra fazer esse treino em casa com halteres?',
  'Obrigada pelas dicas!',
  'Great breakdown, thanks!',
  'Voltei depois das férias e já senti diferença.',
  'Alguém treina de manhã cedo também?',
  'Esse vídeo mudou meu supino.',
];

/** Posts at every tier (one with a poll), then kudos, comments and votes from the members who take part. */
export async function publishAndEngage(w: World, members: Member[]): Promise<{ posts: number; kudos: number; comments: number; votes: number }> {
  const t = w.tiers;
  const post = (community: string, content: string, extra: Record<string, unknown> = {}) =>
    w.creator.post<{ id: string }>('/api/v1/posts', { community_id: community, content, ...extra });
  const posts = [
    await post(w.communities.main, '# Bem-vindos à Força Total!\n\nComecem pelo programa **Força Base** se estão voltando a treinar. Dúvidas? Comentem aqui.', { pinned: true }),
    await post(w.communities.main, '## Técnica: travar a lombar no agachamento\n\n1. Respire fundo antes de descer\n2. Abdômen firme\n3. Joelhos acompanham a ponta dos pés', {
      tier_min_id: t.essencial,
      preview: 'Três ajustes que protegem sua lombar no agachamento.',
    }),
    await post(w.communities.main, 'Planejamento do trimestre: semanas 1–4 base, 5–8 volume, 9–12 intensidade.', { tier_min_id: t.essencialTrimestral, preview: 'Como vamos dividir os próximos três meses.' }),
    await post(w.communities.main, 'Vídeo: ajuste fino do supino, da pegada ao arco.', {
      tier_min_id: t.elite,
      preview: 'O ajuste de pegada que mais aumentou o supino das alunas Elite.',
      media: [{ type: 'video', url: 'https://videos.tribes.app/demo/supino-ajuste-fino.mp4' }],
    }),
    await post(w.communities.main, 'Gravação da live mensal de dúvidas: periodização e descanso.', { tier_min_id: t.eliteAnual, preview: 'A live deste mês, para quem é Elite.' }),
    await post(w.communities.main, 'Vamos escolher o próximo desafio!', {
      tier_min_id: t.essencial,
      preview: 'Votação do desafio do mês que vem.',
      poll: { question: 'Qual desafio vocês querem no mês que vem?', options: ['Volume total', 'Sequência de dias', 'Mais treinos de perna'], multiple_choice: false },
    }),
    await post(w.communities.run, 'Planilha da semana 1: três corridas leves de 20 minutos.', { tier_min_id: t.corredor, preview: 'Começamos devagar.' }),
  ];
  const pollPost = posts[5]!.id;
  let kudos = 0;
  let comments = 0;
  let votes = 0;
  for (const m of members.filter((x) => x.cast.trains)) {
    const api = memberClient(w, m);
    const feed = await api.get<Array<{ id: string; locked: boolean }>>('/api/v1/member/feed?limit=20');
    for (const item of shuffled(w.rng, feed.filter((f) => !f.locked)).slice(0, 1 + Math.floor(w.rng() * 3))) {
      await api.post(`/api/v1/member/posts/${item.id}/kudos`);
      kudos++;
    }
    if (w.rng() < 0.4) {
      const open = feed.filter((f) => !f.locked);
      if (open.length) {
        await api.post(`/api/v1/member/posts/${pick(w.rng, open).id}/comments`, { body: pick(w.rng, COMMENTS) });
        comments++;
      }
    }
    if (feed.some((f) => f.id === pollPost && !f.locked) && w.rng() < 0.8) {
      await api.post(`/api/v1/member/posts/${pollPost}/poll-votes`, { options: [Math.floor(w.rng() * 3)] });
      votes++;
    }
  }
  w.log(`posts: ${posts.length}; kudos ${kudos}, comments ${comments}, poll votes ${votes}`);
  return { posts: posts.length, kudos, comments, votes };
}

/**
 * Today's money moves: the latest automatic payout bounces (the bank returned it), then the
 * creator switches to manual payouts in the processor's dashboard and takes half of what is
 * available.
 */
export async function payoutsToday(w: World): Promise<{ failed: string; manual: number }> {
  const payouts = await w.creator.get<Array<{ id: string; status: string; method: string; processor_payout_id: string }>>('/api/v1/payouts?limit=20');
  const last = payouts.find((p) => p.method === 'automatic' && (p.status === 'paid' || p.status === 'in_transit'));
  if (!last) throw new Error('no automatic payout to fail: the history made none');
  await w.sim.post(`/v1/test_helpers/payouts/${last.processor_payout_id}/fail`, {});
  await eventually('the failed payout in Tribes', async () => ((await w.creator.get<{ status: string }>(`/api/v1/payouts/${last.id}`)).status === 'failed' ? true : undefined));
  await w.stripe.accounts.update(w.account, { settings: { payouts: { schedule: { interval: 'manual' } } } });
  const balance = await eventually('the manual payout schedule in Tribes', async () => {
    const b = await w.creator.get<{ payout_schedule: string; available_cents: number }>('/api/v1/payouts/balance');
    return b.payout_schedule === 'manual' ? b : undefined;
  });
  const amount = Math.floor(balance.available_cents / 2);
  await w.creator.post('/api/v1/payouts/manual', { amount_cents: amount }, { 'idempotency-key': `demo-manual-payout-${w.account}` });
  w.log(`payouts: ${payouts.length} automatic so far, one failed today; a manual payout of ${(amount / 100).toFixed(2)}`);
  return { failed: last.id, manual: amount };
}
