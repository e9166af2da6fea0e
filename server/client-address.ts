/**
 * Which peer may name the client: X-Forwarded-For is believed only on a connection whose socket
 * address is one of the trusted proxies' (the front door's), never from any other pod or process
 * that reaches the service, which could otherwise write any address there and escape the
 * per-client limits.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** `10.244.0.1/32, fd00::/64` -> the CIDRs; a wrong one is an Error naming it. */
export function parseCidrs(text: string, setting: string): string[] {
  const cidrs = text
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  for (const cidr of cidrs) cidrBlock(cidr, setting);
  return cidrs;
}

function cidrBlock(cidr: string, setting: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } {
  const [address = '', bits] = cidr.split('/');
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!family || !/^\d{1,3}$/.test(bits ?? String(max)) || prefix > max) {
    throw new Error(`${setting}: "${cidr}" is not an address or CIDR (e.g. 10.244.0.1/32)`);
  }
  return { address, prefix, family };
}

/**
 * Fastify's trustProxy: the socket's address (hop 0) and each X-Forwarded-For entry after it, from
 * the last, is trusted while it is one of `cidrs` and fewer than `hops` proxies were passed. The
 * client is the first address not trusted. No CIDRs: the socket's address is the client.
 */
export function proxyTrust(cidrs: readonly string[], hops: number): (address: string, hop: number) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const b = cidrBlock(cidr, 'trusted proxies');
    list.addSubnet(b.address, b.prefix, b.family);
  }
  return (address, hop) => {
    if (hop >= hops) return false;
    const plain = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
    const family = isIPv4(plain) ? 'ipv4' : isIPv6(plain) ? 'ipv6' : undefined;
    return family !== undefined && list.check(plain, family);
  };
}
