import { BlockList, isIP } from 'node:net';

/**
 * Addresses and names that lead into a private network: loopback, private ranges, link-local
 * (home of cloud metadata endpoints), multicast, reserved. Shared by the rules for URLs others
 * open from a post (posts/media-url.ts) and for URLs this service itself calls (webhook
 * endpoints, checked again after DNS resolution at every send: events/sender.ts).
 */
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
// reaches whatever that network calls them (and from this server, whatever ours does).
const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa'];


/** True for an IP address (v4 or v6, mapped forms included) in any of the ranges above. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** True for `localhost` and names under a suffix that only means something inside one network. */
export function isLocalName(name: string): boolean {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  return bare === 'localhost' || LOCAL_SUFFIXES.some((suffix) => bare.endsWith(suffix));
}
