import { BlockList, isIP } from 'node:net';

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

const PRIVATE_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, home of cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

const PRIVATE_V6: [string, number][] = [
  // IPv4-compatible addresses (deprecated, never public), which also holds :: and ::1.
  ['::', 96],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
for (const [network, prefix] of PRIVATE_V4) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of PRIVATE_V6) blocked.addSubnet(network, prefix, 'ipv6');
// Node's BlockList checks an IPv4-mapped IPv6 address (::ffff:7f00:1) against the IPv4
// rules, so the mapped forms of the ranges above need no rules of their own (tested).

// Names that only mean something inside one network; resolving them from a member's phone
// reaches whatever that network calls them.
const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa'];

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
    return isIP(address) === 6 && !blocked.check(address, 'ipv6') ? null : PRIVATE_ADDRESS;
  }
  if (isIP(host) === 4) return blocked.check(host, 'ipv4') ? PRIVATE_ADDRESS : null;

  // "localhost." is the same name as "localhost".
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === 'localhost' || LOCAL_SUFFIXES.some((suffix) => name.endsWith(suffix))) {
    return 'must not point to a local network name';
  }
  if (!name.includes('.')) return 'must use a full domain name, like cdn.example.com';
  return null;
}
