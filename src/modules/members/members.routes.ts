import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerToken, safeEqual, sha256 } from '../../http/auth.js';
import { AppError } from '../../http/errors.js';
import { clientAddress, type Limit } from '../../http/rate-limit.js';
import { authErrors, conflictError, errorResponse, Ok } from '../../http/schemas.js';
import { memberOf } from './member-auth.js';
import { LoggedOut, LoginBody, Member, memberAuthErrors, MemberSession, memberSecurity, SignupBody } from './members.schemas.js';
import type { MembersService } from './members.service.js';

const tags = ['Members'];

export interface LoginLimits {
  /** Guesses at one account, from anywhere. */
  perEmail: Limit;
  /** Attempts from one address over any accounts. Higher: a gym's Wi-Fi or a mobile carrier puts many members behind one address. */
  perIp: Limit;
}
export const DEFAULT_LOGIN_LIMITS: LoginLimits = {
  perEmail: { max: 10, windowMs: 15 * 60_000 },
  perIp: { max: 100, windowMs: 15 * 60_000 },
};

const publicErrors = {
  400: authErrors[400],
  429: errorResponse('Too many attempts; wait `Retry-After` seconds.'),
  503: authErrors[503],
};

const IDEMPOTENCY_NOTE =
  ' `Idempotency-Key` is ignored here: the answer carries a secret token, which is never stored, so it cannot be replayed.';

/**
 * The answer carries a bearer token; the idempotency store would keep it in clear (and a
 * fast hash of the password with the request). Dropping the header before the idempotency
 * hook runs keeps both out of the database.
 */
const ignoreIdempotencyKey = async (request: FastifyRequest) => {
  delete request.headers['idempotency-key'];
};

const retryAfterOf = (ttlsMs: number[]) => Math.max(1, Math.ceil(Math.max(...ttlsMs) / 1000));

/**
 * Login limits per e-mail and per address, counted by @fastify/rate-limit's store (Redis
 * when configured), beside the general per-address limit every request without a credential
 * spends (src/http/rate-limit.ts).
 */
function loginLimiter(app: FastifyInstance, limits: LoginLimits) {
  const emailOf = (request: FastifyRequest) => String((request.body as { email?: unknown } | undefined)?.email ?? '').trim().toLowerCase();
  const checks = [
    app.createRateLimit({
      max: limits.perEmail.max,
      timeWindow: limits.perEmail.windowMs,
      // A digest, so the counter store never holds e-mail addresses.
      keyGenerator: (request) => `member-login:email:${sha256(emailOf(request)).toString('base64url')}`,
    }),
    app.createRateLimit({ max: limits.perIp.max, timeWindow: limits.perIp.windowMs, keyGenerator: (request) => `member-login:ip:${clientAddress(request)}` }),
  ];
  return async (request: FastifyRequest) => {
    // Both counters move on every attempt, so hitting one limit does not pause the other.
    const results = await Promise.all(checks.map((check) => check(request)));
    const ttls = results.flatMap((r) => (!r.isAllowed && r.isExceeded ? [r.ttl] : []));
    if (ttls.length === 0) return;
    const retryAfter = retryAfterOf(ttls);
    throw new AppError('rate_limited', `Too many login attempts for this e-mail or from this address. Retry after ${retryAfter} seconds.`, undefined, {
      'Retry-After': String(retryAfter),
    });
  };
}

/**
 * Sign-ups per address: each one that gets past validation costs a scrypt (about 100 ms of CPU
 * and 32 MiB) and may answer 409 for a known e-mail, so both the CPU and what sign-up tells
 * about which e-mails have accounts are limited per address. Counted before the handler runs.
 */
function signupLimiter(app: FastifyInstance, limit: Limit) {
  const check = app.createRateLimit({ max: limit.max, timeWindow: limit.windowMs, keyGenerator: (request) => `member-signup:ip:${clientAddress(request)}` });
  return async (request: FastifyRequest) => {
    // The operator signing members up (an import, `npm run demo`) is not one address's visitors.
    if (request.principal?.kind === 'admin') return;
    const result = await check(request);
    if (result.isAllowed || !result.isExceeded) return;
    const retryAfter = retryAfterOf([result.ttl]);
    throw new AppError('rate_limited', `Too many sign-ups from this address. Retry after ${retryAfter} seconds.`, undefined, {
      'Retry-After': String(retryAfter),
    });
  };
}

/** Marks a sign-up that carries the operator token as the operator's (a wrong or other token changes nothing). */
function operatorSignup(adminToken: string | undefined) {
  return async (request: FastifyRequest) => {
    const token = bearerToken(request);
    if (adminToken !== undefined && token !== undefined && safeEqual(token, adminToken)) request.principal = { kind: 'admin' };
  };
}

/** Sign-up and login: public, they hand out the token every other member route needs. */
export function memberPublicRoutes(
  service: MembersService,
  opts: {
    loginLimits?: LoginLimits;
    /** Default: as configured (RATE_LIMIT_SIGNUPS_PER_HOUR). */
    signupLimit?: Limit;
    /** Sign-ups that carry it are the operator's: counted against the operator's budget, not the address's sign-ups. */
    adminToken?: string;
  } = {},
): FastifyPluginAsyncTypebox {
  return async (app) => {
    const limits = opts.loginLimits ?? DEFAULT_LOGIN_LIMITS;
    const limitLogin = loginLimiter(app, limits);
    const signupLimit = opts.signupLimit ?? app.rateLimits.signupPerAddress;
    const limitSignup = signupLimiter(app, signupLimit);

    app.post(
      '/signup',
      {
        onRequest: [ignoreIdempotencyKey, operatorSignup(opts.adminToken)],
        preHandler: limitSignup,
        schema: {
          tags,
          security: [],
          summary: 'Sign up as a member',
          description:
            'Creates a member account and logs it in: answers the member and a bearer token (`tribes_mt_...`, valid 30 days). The e-mail is unique case-insensitively (409 `email_taken`, log in instead); the password has 10 to 200 characters.' +
            ` At most ${signupLimit.max} sign-ups per address every ${signupLimit.windowMs / 60_000} minutes, each attempt counting, a 409 too (429 with \`Retry-After\`).` +
            ' Sign-ups sent with the operator token (`Authorization: Bearer <ADMIN_TOKEN>`: an import, `npm run demo`) are not counted per address but against the operator\'s general budget; any other bearer token is ignored.' +
            IDEMPOTENCY_NOTE,
          body: SignupBody,
          response: { 201: Ok(MemberSession), ...publicErrors, ...conflictError('An account with this e-mail exists.') },
        },
      },
      async (request, reply) => reply.code(201).send({ success: true as const, data: await service.signup(request.body) }),
    );

    app.post(
      '/login',
      {
        onRequest: ignoreIdempotencyKey,
        preHandler: limitLogin,
        schema: {
          tags,
          security: [],
          summary: 'Log in as a member',
          description:
            `A new bearer token (valid 30 days) for the right e-mail and password. A wrong password and an unknown e-mail get the same 401, so the answer never tells which e-mails have accounts. At most ${limits.perEmail.max} attempts per e-mail every ${limits.perEmail.windowMs / 60_000} minutes and ${limits.perIp.max} per address every ${limits.perIp.windowMs / 60_000} minutes (429 with \`Retry-After\`).` +
            IDEMPOTENCY_NOTE,
          body: LoginBody,
          response: { 200: Ok(MemberSession), ...publicErrors, 401: errorResponse('E-mail or password is incorrect.') },
        },
      },
      async (request) => ({ success: true as const, data: await service.login(request.body) }),
    );
  };
}

/** Routes of the logged-in member; registered where the memberAuth hook applies. */
export function memberRoutes(service: MembersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/me',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'The logged-in member',
          description: "The member's own account.",
          response: { 200: Ok(Type.Ref(Member)), ...memberAuthErrors },
        },
      },
      async (request) => ({ success: true as const, data: await service.me(memberOf(request)) }),
    );

    app.post(
      '/logout',
      {
        schema: {
          tags,
          security: memberSecurity,
          summary: 'Log out',
          description: 'Revokes the token this request was made with; it fails from the next request on. Other tokens of the member (other devices) keep working.',
          response: { 200: Ok(LoggedOut), ...memberAuthErrors },
        },
      },
      async (request) => ({ success: true as const, data: await service.logout(memberOf(request), bearerToken(request) ?? '') }),
    );
  };
}
