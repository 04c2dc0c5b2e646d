/**
 * npm run demo: a believable creator, made against a running `npm start` through the public,
 * member and admin APIs and the processor simulator's test helpers. Six months of processor
 * history (joins, renewals, failed cards, cancellations, a refund, weekly payouts) are made on
 * the creator's own processor clock, started six months back and advanced to today; the
 * service's own records (workouts, posts, comments) are today's, with workouts dated when they
 * were done. Run it again for a second, independent creator.
 *
 * Options: --json (the summary as one JSON object on stdout, progress on stderr), --env (the
 * summary on stderr, `export` lines of the API key, a member's token and the challenge on stdout), --seed N.
 * Environment: TRIBES_URL, PROCESSOR_SIM_URL, ADMIN_TOKEN (else DATA_DIR/admin-token).
 */
import crypto from 'node:crypto';
import Stripe from 'stripe';
import { adminTokenForClient } from '../src/http/admin-token.js';
import { planCast, rngOf, STORY_DAYS } from './demo/cast.js';
import { createChallenge, createPrograms, payoutsToday, publishAndEngage, train } from './demo/content.js';
import { client, eventually } from './demo/http.js';
import { createCatalog, createCreator, signUp } from './demo/setup.js';
import { inboxDrained, runHistory, type World } from './demo/story.js';
import { sanityCheck, summarize } from './demo/summary.js';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const asEnv = args.includes('--env');
const seedArg = args.indexOf('--seed');
const seed = seedArg >= 0 ? Number(args[seedArg + 1]) : crypto.randomInt(2 ** 31);
const began = Date.now();
const say = (line: string) => (asJson || asEnv ? process.stderr : process.stdout).write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(5)}s] ${line}\n`);

async function main(): Promise<void> {
  const apiBase = (process.env.TRIBES_URL || `http://127.0.0.1:${process.env.PORT || 3000}`).replace(/\/+$/, '');
  const simUrl = new URL(process.env.PROCESSOR_SIM_URL || `http://${process.env.PROCESSOR_SIM_HOST || '127.0.0.1'}:${process.env.PROCESSOR_SIM_PORT || 12111}`);
  await fetch(`${apiBase}/ready`).catch(() => {
    throw new Error(`Tribes is not answering at ${apiBase}: start it with npm start (or set TRIBES_URL).`);
  });
  const sim = client(simUrl.origin);
  const about = await sim.get<{ object?: string }>('/').catch(() => undefined);
  if (about?.object !== 'processor_simulator') throw new Error(`No processor simulator at ${simUrl.origin}: the demo needs PROCESSOR=simulator (set PROCESSOR_SIM_URL if it listens elsewhere).`);

  const rng = rngOf(seed);
  // E-mails and slugs must be new on every run, even with the same seed.
  const tag = `${seed.toString(36)}${crypto.randomBytes(2).toString('hex')}`;
  const token = adminTokenForClient(process.env);
  const admin = client(apiBase, token);
  say(`making a demo creator (seed ${seed}) at ${apiBase}`);
  const made = await createCreator(admin, sim, rng, tag, apiBase);
  const stripe = new Stripe('sk_test_tribes_demo', { host: simUrl.hostname, port: Number(simUrl.port || 80), protocol: 'http', maxNetworkRetries: 2 });
  const base = { creator: client(apiBase, made.apiKey), admin, sim, stripe, apiBase, account: made.account, start: made.start, rng, log: say };
  const world: World = { ...base, ...(await createCatalog(base, tag)) };
  say(`${made.persona.brand}: 2 communities, 5 tiers; processor clock started ${STORY_DAYS} days ago`);

  const cast = planCast(rng, tag);
  const members = await signUp(client(apiBase, token), cast);
  say(`${members.length} members signed up`);
  const workouts = await createPrograms(world);
  await runHistory(world, members);

  const challengeId = await createChallenge(world);
  const training = await train(world, members, workouts, challengeId);
  const engagement = await publishAndEngage(world, members);
  const payouts = await payoutsToday(world);
  await world.creator.del(`/api/v1/communities/${world.communities.run}`);
  // Pausing sets the live subscriptions to end at period end at the processor, after the answer.
  await eventually('the paused community to converge', async () => {
    const subs = await world.creator.get<Array<{ status: string; cancel_at_period_end: boolean }>>(`/api/v1/subscriptions?community_id=${world.communities.run}&limit=100`);
    return subs.every((x) => x.status === 'canceled' || x.cancel_at_period_end) ? true : undefined;
  });
  say('Corre Comigo 5K paused: its members leave at the end of their period');

  await inboxDrained(world);
  const summary = await summarize(world, { ...made, members, challengeId, training, engagement, payouts, seed, seconds: (Date.now() - began) / 1000 });
  const problems = sanityCheck(summary);
  if (asJson) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else if (asEnv) {
    process.stderr.write(summary.text);
    // For `eval "$(npm run --silent demo -- --env)"`: the shell keeps what the walkthrough uses.
    const vars = { TRIBES_KEY: summary.api_key, MEMBER_TOKEN: summary.member_login.token, MEMBER_EMAIL: summary.member_login.email, CHALLENGE_ID: summary.challenge_id };
    process.stdout.write(Object.entries(vars).map(([k, v]) => `export ${k}='${v}'`).join('\n') + '\n');
  } else process.stdout.write(summary.text);
  if (problems.length) {
    process.stderr.write(`The demo creator fails its sanity check:\n- ${problems.join('\n- ')}\n`);
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
