import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks 1.0 signing: a `whsec_` secret is base64 of 24 random bytes (as Svix
 * makes them); a signature is `v1,` + base64 of HMAC-SHA256 over `id.timestamp.body` with the
 * secret's bytes, and several (a rotation's old and new secret) are separated by spaces.
 * Tests check every delivery with the `standardwebhooks` npm package, not with this file.
 */
export const SECRET_PREFIX = 'whsec_';

export const newEndpointSecret = (): string => `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;

export function signatureHeader(secrets: string[], id: string, timestampSeconds: number, body: string): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', Buffer.from(s.slice(SECRET_PREFIX.length), 'base64')).update(content).digest('base64')}`).join(' ');
}
