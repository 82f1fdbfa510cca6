/**
 * The address classes a dynamic forward proxy refuses to reach unless its backend allows them:
 * the gateway's own host (loopback), link-local neighbours, and the cloud instance-metadata
 * endpoints (which hand out credentials). The check runs on every resolved address, never on
 * the name, so a name that resolves to 127.0.0.1 (DNS rebinding) is refused like the IP itself.
 */
import { BlockList, isIP } from 'node:net';

export type AddressClass = 'loopback' | 'linkLocal' | 'metadata' | 'unspecified';

export const ADDRESS_CLASSES: readonly AddressClass[] = ['metadata', 'loopback', 'linkLocal', 'unspecified'];

function list(entries: readonly (readonly [string, number, 'ipv4' | 'ipv6'])[]): BlockList {
  const out = new BlockList();
  for (const [net, prefix, family] of entries) {
    if (prefix === (family === 'ipv4' ? 32 : 128)) out.addAddress(net, family);
    else out.addSubnet(net, prefix, family);
  }
  return out;
}

/**
 * Metadata endpoints: AWS/GCP/Azure/OCI/DigitalOcean (169.254.169.254), AWS IPv6 (fd00:ec2::254),
 * AWS ECS task metadata (169.254.170.2), Alibaba (100.100.100.200), Azure wire server (168.63.129.16).
 * Checked before link-local, so allowing link-local does not open the metadata service.
 */
const CLASSES: Readonly<Record<AddressClass, BlockList>> = {
  metadata: list([
    ['169.254.169.254', 32, 'ipv4'], ['169.254.170.2', 32, 'ipv4'], ['100.100.100.200', 32, 'ipv4'],
    ['168.63.129.16', 32, 'ipv4'], ['fd00:ec2::254', 128, 'ipv6'],
  ]),
  loopback: list([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]),
  linkLocal: list([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]),
  unspecified: list([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]),
};

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is checked as the IPv4 address it carries. */
function normalise(address: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const version = isIP(address);
  if (version === 4) return { address, family: 'ipv4' };
  if (version !== 6) return undefined;
  const mapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIP(mapped[1]) === 4) return { address: mapped[1], family: 'ipv4' };
  return { address, family: 'ipv6' };
}

/** The blocked class `address` falls in, or undefined when it is an ordinary address. Not an IP: 'unspecified' (fail closed). */
export function addressClass(address: string): AddressClass | undefined {
  const ip = normalise(address);
  if (!ip) return 'unspecified';
  for (const name of ADDRESS_CLASSES) if (CLASSES[name].check(ip.address, ip.family)) return name;
  return undefined;
}

/** Why `address` may not be reached, or undefined when it may. */
export function refusedAddress(address: string, allowed: ReadonlySet<AddressClass>): AddressClass | undefined {
  const found = addressClass(address);
  return found === undefined || allowed.has(found) ? undefined : found;
}
