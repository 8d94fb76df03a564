import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, SocketAddress } from 'node:net';

/**
 * Addresses a webhook (or the `http_fetch` tool) must not reach unless AGENTQ_WEBHOOK_ALLOW_PRIVATE=true:
 * loopback, private, carrier-grade NAT, link-local (cloud metadata at 169.254.169.254), multicast,
 * reserved and documentation ranges. IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) are checked as IPv4.
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  // Ranges a gateway translates to an IPv4 address of its own choosing: the IPv4 address
  // they reach is not the one checked above, so they are refused whole. SIIT's IPv4-translated form
  // (RFC 6145, `::ffff:0:a.b.c.d`), the local-use NAT64 prefix (RFC 8215), 6to4 (RFC 3056, deprecated by
  // RFC 7526) and Teredo (RFC 4380, its client address obfuscated).
  ['::ffff:0:0:0', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['2001::', 32],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/**
 * The well-known NAT64 prefix (RFC 6052): `64:ff9b::a.b.c.d` reaches IPv4 `a.b.c.d` through the
 * network's NAT64 gateway. Under DNS64 every IPv4-only host resolves into it, so it is not refused
 * whole: the embedded IPv4 address is checked instead (`64:ff9b::10.0.0.1` is refused like 10.0.0.1).
 */
const NAT64 = new BlockList();
NAT64.addSubnet('64:ff9b::', 96, 'ipv6');

/** The IPv4 address in the low 32 bits of an IPv6 address. */
function embeddedIpv4(address: string): string {
  // SocketAddress normalises any spelling (`64:ff9b::7f00:1`, `64:ff9b:0::127.0.0.1`) to one form.
  const words = new SocketAddress({ address, family: 'ipv6' }).address.split(':');
  const tail = words.at(-1) ?? '';
  if (tail.includes('.')) return tail;
  const high = Number.parseInt(words.at(-2) || '0', 16);
  const low = Number.parseInt(tail || '0', 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** True for an IP address a webhook may be delivered to without AGENTQ_WEBHOOK_ALLOW_PRIVATE. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4');
  if (NOT_PUBLIC.check(address, 'ipv6')) return false;
  return !NAT64.check(address, 'ipv6') || isPublicAddress(embeddedIpv4(address));
}

/** Resolves a host name to all its addresses (the `dns.lookup(name, {all: true})` shape). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

/** Every address of a host name, as the system resolver gives them (what a connection would use). */
export const resolveHost: ResolveHost = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );
