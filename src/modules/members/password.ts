import crypto from 'node:crypto';

/**
 * Member passwords, hashed with Node's built-in scrypt (memory-hard, no native addon).
 * Stored as `scrypt$N$r$p$saltB64$hashB64`: the parameters travel with each hash, so the
 * cost can be raised later and old hashes still verify.
 */

// N = 2^15, r = 8: 32 MiB and roughly 50-150 ms per hash on a server core. That is the cost
// an attacker pays per guess after a database leak, and what a login costs us.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** scrypt needs about 128·N·r bytes; Node refuses at its 32 MiB default, so allow twice that. */
const maxmemFor = (n: number, r: number) => 2 * 128 * n * r;

function derive(password: string, salt: Buffer, n: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // NFKC: the same password typed on another keyboard (composed vs decomposed accents) must match.
    crypto.scrypt(password.normalize('NFKC'), salt, keyLength, { N: n, r, p, maxmem: maxmemFor(n, r) }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, N, R, P, KEY_LENGTH);
  return ['scrypt', N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

const STORED = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

/** Whether the password matches the stored hash; the final comparison takes constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = STORED.exec(stored);
  if (!match) return false;
  const [n, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const salt = Buffer.from(match[4]!, 'base64');
  const expected = Buffer.from(match[5]!, 'base64');
  if (expected.length === 0) return false;
  const actual = await derive(password, salt, n, r, p, expected.length);
  return crypto.timingSafeEqual(actual, expected);
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the same time as checking a real password, for logins with an unknown e-mail:
 * without it, a fast "no such account" answer would tell which e-mails have accounts.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword(crypto.randomBytes(24).toString('base64'));
  await verifyPassword(password, await dummyHash);
  return false;
}
