import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, eventually, subscribe } from '../../../test/billing-kit.js';
import { subscribedMember } from '../../../test/challenges-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, type TestApp, type TestCreator, type TestMember } from '../../../test/helpers.js';
import { mirrorSubscription } from '../../../test/members-kit.js';
import { asMember, createPost, creatorPost, feedOf, lockedFor, patchPost, seenBy } from '../../../test/posts-kit.js';

/** The paywall (issue #14, DESIGN §5, §7): who reads a post in full, what everyone else is shown, and engagement with what they cannot read. */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(async () => t.close());

/** A community with tiers created in this order, each `[name, price_cents, billing_period, level?]`. */
async function tiered(creator: TestCreator, specs: Array<[string, number, string, number?]>, community: Record<string, unknown> = {}) {
  const { id: communityId } = await createCommunity(t, creator, community);
  const tiers: Record<string, string> = {};
  for (const [name, price_cents, billing_period, level] of specs) {
    tiers[name] = (await createTier(t, creator, communityId, { name, price_cents, billing_period, ...(level === undefined ? {} : { level }) })).id;
  }
  return { communityId, tiers };
}

/**
 * A public post and one post per tier named in `minimums` (that tier its minimum), then
 * whether each is locked for a member holding each tier, on the feed and the post page alike.
 */
async function lockGrid(creator: TestCreator, communityId: string, tiers: Record<string, string>, minimums: string[]) {
  const posts: Record<string, string> = { public: (await createPost(t, creator, { community_id: communityId })).id };
  for (const name of minimums) posts[name] = (await createPost(t, creator, { community_id: communityId, tier_min_id: tiers[name] })).id;
  const out: Record<string, Record<string, boolean>> = {};
  for (const [holder, tierId] of Object.entries(tiers)) {
    const member = await subscribedMember(t, creator, { communityId, tierId });
    out[holder] = {};
    for (const [name, id] of Object.entries(posts)) out[holder][name] = await lockedFor(t, member, communityId, id);
  }
  return out;
}

const engage = (member: TestMember, id: string) => ({
  kudos: () => asMember(t, member, 'POST', `/posts/${id}/kudos`),
  unkudos: () => asMember(t, member, 'DELETE', `/posts/${id}/kudos`),
  comments: () => asMember(t, member, 'GET', `/posts/${id}/comments`),
  comment: () => asMember(t, member, 'POST', `/posts/${id}/comments`, { body: 'Strong work!' }),
  vote: () => asMember(t, member, 'POST', `/posts/${id}/poll-votes`, { options: [0] }),
});
const POLL = { question: 'Which split next block?', options: ['Push pull legs', 'Upper lower'] };

describe('who reads a post in full, on the feed and on the post page alike', () => {
  it('locks a post for members below its minimum tier and opens it to members on that tier or above, by price', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly'], ['Elite', 3000, 'monthly']]);
    expect(await lockGrid(creator, communityId, tiers, ['Basic', 'Pro', 'Elite'])).toEqual({
      Basic: { public: false, Basic: false, Pro: true, Elite: true },
      Pro: { public: false, Basic: false, Pro: false, Elite: true },
      Elite: { public: false, Basic: false, Pro: false, Elite: false },
    });
  });

  it('compares monthly-normalised prices across billing periods: a yearly 12000 ties a monthly 1000 and the later tier of a tie ranks higher', async () => {
    const creator = await createCreator(t);
    // Quarterly 2700 is 900 a month: below Monthly although its price is higher.
    const { communityId, tiers } = await tiered(creator, [['Monthly', 1000, 'monthly'], ['Yearly', 12000, 'yearly'], ['Quarterly', 2700, 'quarterly']]);
    expect(await lockGrid(creator, communityId, tiers, ['Monthly', 'Yearly', 'Quarterly'])).toEqual({
      Monthly: { public: false, Monthly: false, Yearly: true, Quarterly: false },
      Yearly: { public: false, Monthly: false, Yearly: false, Quarterly: false },
      Quarterly: { public: false, Monthly: true, Yearly: true, Quarterly: false },
    });
  });

  it('ranks by level alone once any tier has one: equal levels qualify, a tier without a level counts as 0, prices no longer matter', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly', 2], ['Pro', 5000, 'monthly', 1], ['Elite', 9000, 'monthly'], ['Annual', 12000, 'yearly', 2]]);
    expect(await lockGrid(creator, communityId, tiers, ['Annual', 'Pro', 'Elite'])).toEqual({
      Basic: { public: false, Annual: false, Pro: false, Elite: false },
      Pro: { public: false, Annual: true, Pro: false, Elite: false },
      Elite: { public: false, Annual: true, Pro: true, Elite: false },
      Annual: { public: false, Annual: false, Pro: false, Elite: false },
    });
  });

  it('opens a post to trialing, active, cancel-at-period-end and past-due subscriptions, and locks it for a canceled one', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly']]);
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Pro });
    const holding = async (...subs: Array<[string, 'trialing' | 'active' | 'past_due' | 'canceled', boolean?]>) => {
      const member = await createMember(t);
      for (const [tier, status, cancelAtPeriodEnd] of subs) await mirrorSubscription(t, creator, { communityId, tierId: tiers[tier]!, memberId: member.id }, { status, cancelAtPeriodEnd });
      return lockedFor(t, member, communityId, post.id);
    };
    expect({
      trialing: await holding(['Pro', 'trialing']),
      active: await holding(['Pro', 'active']),
      cancelAtPeriodEnd: await holding(['Pro', 'active', true]),
      pastDue: await holding(['Pro', 'past_due']),
      canceled: await holding(['Pro', 'canceled']),
      canceledProLiveBasic: await holding(['Pro', 'canceled'], ['Basic', 'active']),
      canceledBasicLivePro: await holding(['Basic', 'canceled'], ['Pro', 'active']),
    }).toEqual({ trialing: false, active: false, cancelAtPeriodEnd: false, pastDue: false, canceled: true, canceledProLiveBasic: true, canceledBasicLivePro: false });
  });

  it('keeps a post open after the creator cancels at period end and locks it once the period has ended, through the processor', async () => {
    const s = await subscribe(t, { priceCents: 2500 });
    const post = await createPost(t, s.creator, { community_id: s.communityId, tier_min_id: s.tierId, content: 'Deload week plan' });
    expect(await lockedFor(t, s.member, s.communityId, post.id)).toBe(false);

    const res = await t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${s.subscription.id}/cancel`, headers: s.creator.headers, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).data).toMatchObject({ status: 'active', cancel_at_period_end: true });
    await t.app.tasks.idle();
    expect(await lockedFor(t, s.member, s.communityId, post.id)).toBe(false);

    await advanceDays(t, 32);
    await eventually(t, async () => expect(await lockedFor(t, s.member, s.communityId, post.id)).toBe(true));
    // Held once, so the feed stays readable, and the offer is the tier they had.
    expect(await seenBy(t, s.member, s.communityId, post.id)).toMatchObject({ upgrade_tier_id: s.tierId, upgrade_price_cents: 2500, upgrade_billing_period: 'monthly' });
  });

  it('opens a tiered post during a trial started through hosted checkout', async () => {
    const s = await subscribe(t, { trialDays: 7 });
    expect(s.subscription.status).toBe('trialing');
    const post = await createPost(t, s.creator, { community_id: s.communityId, tier_min_id: s.tierId });
    expect(await lockedFor(t, s.member, s.communityId, post.id)).toBe(false);
  });

  it('shows a member without any subscription the public posts of a public community in full and its tiered posts locked', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly']]);
    const open = await createPost(t, creator, { community_id: communityId });
    const gated = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Basic });
    const stranger = await createMember(t);
    expect(await lockedFor(t, stranger, communityId, open.id)).toBe(false);
    expect(await seenBy(t, stranger, communityId, gated.id)).toMatchObject({ locked: true, upgrade_tier_id: tiers.Basic, upgrade_tier_name: 'Basic' });
    // Their own feed (no community_id) lists only communities they hold or held a subscription in.
    expect((await feedOf(t, stranger)).data).toEqual([]);
  });

  it('hides a private community from a subscriber of another community of the same creator and locks the tiered posts of a public one', async () => {
    const creator = await createCreator(t);
    const secret = await tiered(creator, [['Inner', 1000, 'monthly']], { is_public: false });
    const open = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly']]);
    const own = await tiered(creator, [['Elite', 99900, 'monthly']]);
    const member = await subscribedMember(t, creator, { communityId: own.communityId, tierId: own.tiers.Elite! });
    const hidden = [await createPost(t, creator, { community_id: secret.communityId }), await createPost(t, creator, { community_id: secret.communityId, tier_min_id: secret.tiers.Inner })];
    for (const post of hidden) {
      for (const res of [await asMember(t, member, 'GET', `/posts/${post.id}`), await engage(member, post.id).comments(), await engage(member, post.id).kudos()]) {
        expect(res.statusCode, res.body).toBe(404);
      }
    }
    const feed = await asMember(t, member, 'GET', `/feed?community_id=${secret.communityId}`);
    expect(feed.statusCode).toBe(404);
    expect(json(feed).error.code).toBe('not_found');

    const publicPost = await createPost(t, creator, { community_id: open.communityId });
    const basicPost = await createPost(t, creator, { community_id: open.communityId, tier_min_id: open.tiers.Basic });
    const ownPost = await createPost(t, creator, { community_id: own.communityId, tier_min_id: own.tiers.Elite });
    expect(await lockedFor(t, member, open.communityId, publicPost.id)).toBe(false);
    // A far pricier tier of another community is no tier of this one.
    expect(await seenBy(t, member, open.communityId, basicPost.id)).toMatchObject({ locked: true, upgrade_tier_id: open.tiers.Basic });
    expect((await feedOf(t, member)).data.map((p) => p.id)).toEqual([ownPost.id]);
  });

  it('answers posts opened together from one read, each as its own member may see it: in full, locked, or not at all', async () => {
    const creator = await createCreator(t);
    const secret = await tiered(creator, [['Inner', 1000, 'monthly']], { is_public: false });
    const open = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly']]);
    const basic = await subscribedMember(t, creator, { communityId: open.communityId, tierId: open.tiers.Basic! });
    const pro = await subscribedMember(t, creator, { communityId: open.communityId, tierId: open.tiers.Pro! });
    const proPost = await createPost(t, creator, { community_id: open.communityId, tier_min_id: open.tiers.Pro });
    const hidden = await createPost(t, creator, { community_id: secret.communityId });
    const batches = async () => {
      const body = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      const read = (name: string) => Number(new RegExp(`db_batch_size_${name}\\{statement="member_post"\\} (\\d+)`).exec(body)?.[1] ?? 0);
      return { reads: read('sum'), statements: read('count') };
    };
    const before = await batches();
    const [full, locked, missing, unknown] = await Promise.all([
      asMember(t, pro, 'GET', `/posts/${proPost.id}`),
      asMember(t, basic, 'GET', `/posts/${proPost.id}`),
      asMember(t, basic, 'GET', `/posts/${hidden.id}`),
      asMember(t, pro, 'GET', '/posts/0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b'),
    ]);
    expect([full.statusCode, locked.statusCode, missing.statusCode, unknown.statusCode]).toEqual([200, 200, 404, 404]);
    expect(json(full).data).toMatchObject({ id: proPost.id, locked: false, content: proPost.content });
    expect(json(locked).data).toMatchObject({ id: proPost.id, locked: true, upgrade_tier_id: open.tiers.Pro });
    expect(json(locked).data.content).toBeUndefined();
    const after = await batches();
    expect(after.reads - before.reads).toBe(4);
    // Their tokens were looked up together, so their posts are asked for in the same tick.
    expect(after.statements - before.statements).toBeLessThan(4);
  });

  it('locks a post the member read in full as soon as the creator raises its minimum tier above theirs', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly'], ['Elite', 3000, 'monthly']]);
    const member = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! });
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Basic, content: 'Read me while you can' });
    expect(await seenBy(t, member, communityId, post.id)).toMatchObject({ locked: false, content: 'Read me while you can' });
    expect((await patchPost(t, creator, post.id, { tier_min_id: tiers.Elite })).statusCode).toBe(200);
    expect(await seenBy(t, member, communityId, post.id)).toMatchObject({ locked: true, tier_min_id: tiers.Elite, upgrade_tier_id: tiers.Elite });
  });

  it('drops a deleted post from the feed and answers 404 on reading it, its kudos, its comments and its poll votes', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly']]);
    const member = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! });
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Basic, poll: POLL });
    const comment = json(await engage(member, post.id).comment()).data;
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/posts/${post.id}`, headers: creator.headers })).statusCode).toBe(200);

    expect((await feedOf(t, member, `?community_id=${communityId}`)).data).toEqual([]);
    const e = engage(member, post.id);
    const answers = [
      await asMember(t, member, 'GET', `/posts/${post.id}`),
      await e.kudos(),
      await e.unkudos(),
      await e.comments(),
      await e.comment(),
      await asMember(t, member, 'DELETE', `/posts/${post.id}/comments/${comment.id}`),
      await e.vote(),
    ];
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.body).not.toContain(POLL.question);
    }
  });
});

describe('what a locked post offers instead', () => {
  it('offers the cheapest active tier that unlocks the post by monthly price, skips deactivated ones, and offers none when no active tier does', async () => {
    const creator = await createCreator(t);
    // By monthly price: Basic 1000, Pro Annual 1800, Pro 2000, Elite 3000.
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly'], ['Elite', 3000, 'monthly'], ['Pro Annual', 21600, 'yearly']]);
    const annualPost = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers['Pro Annual'] });
    const proPost = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Pro });
    const basic = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! });
    const annual = await subscribedMember(t, creator, { communityId, tierId: tiers['Pro Annual']! });
    const offer = async (postId: string) => {
      const { upgrade_tier_id, upgrade_tier_name, upgrade_price_cents, upgrade_billing_period, locked } = await seenBy(t, basic, communityId, postId);
      return { locked, upgrade_tier_id, upgrade_tier_name, upgrade_price_cents, upgrade_billing_period };
    };
    const pro = { locked: true, upgrade_tier_id: tiers.Pro, upgrade_tier_name: 'Pro', upgrade_price_cents: 2000, upgrade_billing_period: 'monthly' };
    expect(await offer(annualPost.id)).toEqual({ locked: true, upgrade_tier_id: tiers['Pro Annual'], upgrade_tier_name: 'Pro Annual', upgrade_price_cents: 21600, upgrade_billing_period: 'yearly' });
    // Pro Annual is cheaper but ranks below Pro: it does not unlock a Pro post.
    expect(await offer(proPost.id)).toEqual(pro);

    const deactivate = async (name: string) => expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/tiers/${tiers[name]}`, headers: creator.headers })).statusCode).toBe(200);
    await deactivate('Pro Annual');
    expect(await offer(annualPost.id)).toEqual(pro);
    // Existing subscriptions to a deactivated tier continue, and so does what they open.
    expect(await lockedFor(t, annual, communityId, annualPost.id)).toBe(false);
    await deactivate('Pro');
    await deactivate('Elite');
    const none = { locked: true, upgrade_tier_id: null, upgrade_tier_name: null, upgrade_price_cents: null, upgrade_billing_period: null };
    expect(await offer(annualPost.id)).toEqual(none);
    expect(await offer(proPost.id)).toEqual(none);
  });

  it("shows the creator's own preview instead of the automatic one, and none once it is set to null on a post too short for one", async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly']]);
    const member = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! });
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Pro, content: 'My full **meal plan** for the cut', preview: 'What I eat on a cut, macro by macro' });
    const view = await seenBy(t, member, communityId, post.id);
    expect(view.preview).toBe('What I eat on a cut, macro by macro');
    expect(JSON.stringify(view)).not.toContain('meal plan');
    expect((await patchPost(t, creator, post.id, { preview: null })).statusCode).toBe(200);
    expect((await seenBy(t, member, communityId, post.id)).preview).toBeNull();
  });

  it('derives the automatic preview as plain text without markdown syntax, cut at a word to a third of the text and at most 140 characters', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly']]);
    const member = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! });
    const content = '# Leg day\n\n**Squat** 5x5, then _lunges_ with a [form video](https://example.com/form) and `tempo 3-1-1`.\n\n- warm up\n- > stay *tight*\n\n~~no excuses~~';
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Pro, content });
    const { preview } = await seenBy(t, member, communityId, post.id);
    // The text is 'Leg day Squat 5x5, then lunges with a form video and tempo 3-1-1. warm up stay tight no excuses': 95 characters, a third is 31.
    expect(preview).toBe('Leg day Squat 5x5, then lunges…');
    for (const syntax of ['#', '*', '_', '`', '[', '](', '>', '~~', 'https://example.com/form', '<']) expect(preview, syntax).not.toContain(syntax);

    const long = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Pro, content: `**${'Sprint intervals build speed. '.repeat(20).trim()}**` });
    const cut = (await seenBy(t, member, communityId, long.id)).preview as string;
    expect([...cut].length).toBeLessThanOrEqual(140);
    expect([...cut].length).toBeGreaterThan(110);
    expect(cut).toMatch(/^Sprint intervals build speed\. .*…$/);
    expect(cut).not.toContain('*');
  });
});

describe('engagement with a post the member cannot read', () => {
  it('answers 403 to comments, kudos and poll votes on a locked post, with bodies that say nothing of its content or poll', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly'], ['Pro', 2000, 'monthly']]);
    const member = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! });
    const post = await createPost(t, creator, { community_id: communityId, tier_min_id: tiers.Pro, content: 'Pro only: my competition peaking block', poll: POLL });
    const e = engage(member, post.id);
    for (const res of [await e.comments(), await e.comment(), await e.kudos(), await e.unkudos(), await e.vote()]) {
      expect(res.statusCode, res.body).toBe(403);
      expect(json(res).error.code).toBe('forbidden');
      for (const text of ['peaking block', POLL.question, ...POLL.options]) expect(res.body).not.toContain(text);
    }
    expect(await creatorPost(t, creator, post.id)).toMatchObject({ kudos_count: 0, comments_count: 0, poll: { voters: 0 } });
  });

  it('answers 403 to kudos, comments and votes on a public post from members without a live subscription to its community', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly']]);
    const post = await createPost(t, creator, { community_id: communityId, poll: POLL });
    const stranger = await createMember(t);
    const former = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! }, { status: 'canceled' });
    for (const member of [stranger, former]) {
      expect(await lockedFor(t, member, communityId, post.id)).toBe(false);
      const e = engage(member, post.id);
      for (const res of [await e.comment(), await e.kudos(), await e.vote()]) expect(res.statusCode, res.body).toBe(403);
    }
    expect(await creatorPost(t, creator, post.id)).toMatchObject({ kudos_count: 0, comments_count: 0, poll: { voters: 0 } });
  });

  // The conversation under a post is the community's: reading it needs a live subscription too.
  it('answers 403 to the comments of a public post for members without a live subscription to its community', async () => {
    const creator = await createCreator(t);
    const { communityId, tiers } = await tiered(creator, [['Basic', 1000, 'monthly']], { is_public: false });
    const post = await createPost(t, creator, { community_id: communityId });
    const insider = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! });
    expect((await engage(insider, post.id).comment()).statusCode).toBe(201);
    const former = await subscribedMember(t, creator, { communityId, tierId: tiers.Basic! }, { status: 'canceled' });
    const res = await engage(former, post.id).comments();
    expect(res.statusCode, res.body).toBe(403);
  });
});
