import { isIP } from 'node:net';
import { isLocalName, isPrivateAddress } from '../../http/public-address.js';

/**
 * Which media URLs a post may carry. The server never fetches them: members' apps do. So the
 * check is on the URL as written (no DNS resolution, which would only tell us what a name
 * points to today, from our network), and its purpose is that a post cannot turn every
 * reader's device into a client of their own router, printer or cloud metadata endpoint, nor
 * load anything over a connection others can tamper with.
 */
export const MEDIA_TYPES = ['image', 'video', 'audio'] as const;
export const MEDIA_MAX = 10;
export const MEDIA_URL_MAX = 2048;

const PRIVATE_ADDRESS = 'must not point to a private, loopback or link-local address';

/** Why `url` cannot be a post's media URL, in words its author can act on; null when it can. */
export function mediaUrlProblem(url: string): string | null {
  if (url.length > MEDIA_URL_MAX) return `must be at most ${MEDIA_URL_MAX} characters long`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be a complete web address, like https://cdn.example.com/photo.jpg';
  }
  if (parsed.protocol !== 'https:') return 'must use https';
  // What is stored and answered is the parsed form, where a non-ASCII character takes up to 12
  // characters (%F0%9F%98%80) and a name its punycode: that form must keep to the bound too.
  if (parsed.href.length > MEDIA_URL_MAX) return `must be at most ${MEDIA_URL_MAX} characters long once percent-encoded`;
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry a user name or password';

  // The parser has already lower-cased the host, turned IDNs into punycode and rewritten
  // numeric tricks (2130706433, 0x7f.1, 127.1) as dotted IPv4, so checks see the real host.
  const host = parsed.hostname;
  if (host.startsWith('[')) {
    const address = host.slice(1, -1);
    return isIP(address) === 6 && !isPrivateAddress(address) ? null : PRIVATE_ADDRESS;
  }
  if (isIP(host) === 4) return isPrivateAddress(host) ? PRIVATE_ADDRESS : null;

  // "localhost." is the same name as "localhost".
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (isLocalName(name)) {
    return 'must not point to a local network name';
  }
  if (!name.includes('.')) return 'must use a full domain name, like cdn.example.com';
  return null;
}
