import { CREATORS, pick, STORY_DAYS, TIERS, type Cast, type Rng, type TierKey } from './cast.js';
import { client, inParallel, type Client } from './http.js';
import { DAY, type Member, type World } from './story.js';

export const MEMBER_PASSWORD = 'treino-forte-2026';

/**
 * Onboarding as a creator does it: a link from Tribes, the processor's hosted page opened,
 * Continue pressed, and back to Tribes' return page (which reads the account again).
 */
async function onboard(apiBase: string, apiKey: string): Promise<void> {
  const { url } = await client(apiBase, apiKey).post<{ url: string }>('/api/v1/account/onboarding-link');
  const form = await fetch(url);
  if (form.status !== 200) throw new Error(`the hosted onboarding page answered ${form.status}`);
  const done = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'business_name=demo' });
  const back = done.headers.get('location');
  if (done.status !== 303 || !back) throw new Error(`pressing Continue answered ${done.status}`);
  // Tribes' return page, when PUBLIC_URL is this server (the account.updated event tells it anyway).
  if (new URL(back).origin === new URL(apiBase).origin) await fetch(back);
}

/** The creator (through the operator API), with its processor account's clock started six months ago, onboarded. */
export async function createCreator(admin: Client, sim: Client, rng: Rng, tag: string, apiBase: string) {
  const persona = pick(rng, CREATORS);
  const email = `${persona.name.toLowerCase().replace(/[^a-z]+/g, '.')}+${tag}@example.com`;
  const made = await admin.post<{ creator: { id: string; processor_account_id: string | null }; api_key: string }>('/api/v1/admin/creators', {
    name: persona.brand,
    email,
  });
  const account = made.creator.processor_account_id;
  if (!account) throw new Error('the creator has no processor account');
  const { now } = await sim.get<{ now: number }>(`/v1/test_helpers/accounts/${account}/clock`);
  const start = now - STORY_DAYS * DAY;
  await sim.post(`/v1/test_helpers/accounts/${account}/clock`, { now: start });
  await onboard(apiBase, made.api_key);
  return { persona, email, creatorId: made.creator.id, apiKey: made.api_key, account, start };
}

/** Two communities and five tiers; payouts weekly (as a creator would set it in the processor's dashboard). */
export async function createCatalog(w: Omit<World, 'communities' | 'tiers'>, tag: string) {
  await w.stripe.accounts.update(w.account, { settings: { payouts: { schedule: { interval: 'weekly', weekly_anchor: 'friday' } } } });
  const community = (name: string, slug: string, category: string, description: string) =>
    w.creator.post<{ id: string }>('/api/v1/communities', { name, slug: `${slug}-${tag}`, category, description, is_public: true });
  const main = await community(
    'Força Total',
    'forca-total',
    'musculacao',
    'Treinos de força e hipertrofia com acompanhamento: programas, desafios mensais e uma comunidade que treina junto.',
  );
  const run = await community('Corre Comigo 5K', 'corre-comigo', 'corrida', 'Do sofá aos 5 km em oito semanas, com planilhas e treinos em grupo.');
  const communities = { main: main.id, run: run.id };
  const tiers = {} as Record<TierKey, string>;
  for (const [key, t] of Object.entries(TIERS) as Array<[TierKey, (typeof TIERS)[TierKey]]>) {
    const tier = await w.creator.post<{ id: string }>('/api/v1/tiers', {
      community_id: communities[t.community],
      name: t.name,
      price_cents: t.price_cents,
      billing_period: t.billing_period,
      benefits: t.benefits,
      ...(t.trial_days ? { trial_days: t.trial_days } : {}),
      ...(t.level !== undefined ? { level: t.level } : {}),
    });
    tiers[key] = tier.id;
  }
  return { communities, tiers };
}

/** Member accounts, signed up by the operator (an import: not held to one address's sign-up limit). */
export async function signUp(api: Client, cast: Cast[]): Promise<Member[]> {
  // Four at a time: each sign-up hashes a password (scrypt), which the server runs on its thread pool.
  return inParallel(cast, 4, async (c) => {
    const s = await api.post<{ member: { id: string }; token: string }>('/api/v1/member/signup', { name: c.name, email: c.email, password: MEMBER_PASSWORD });
    return { cast: c, id: s.member.id, token: s.token, password: MEMBER_PASSWORD };
  });
}
