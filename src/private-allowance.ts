import { BlockList, isIP } from 'node:net';

/**
 * Which non-public destinations webhooks and chat channels may reach (BATON_WEBHOOK_ALLOW_PRIVATE):
 * every one (`true`), none (`false`), or those whose every address lies in one of `networks`
 * (CIDRs, `10.0.0.0/8`) or whose URL names one of `hosts` (`hooks.internal`, lower case).
 */
export type PrivateAllowance = boolean | { readonly networks: readonly string[]; readonly hosts: readonly string[] };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Reads `0`, `1`, or a comma-separated list of CIDRs (`10.0.0.0/8`, `fd00::/8`), single addresses
 * (`10.1.2.3`, as a /32 or /128) and host names (`hooks.internal`). Throws an Error naming the
 * first malformed entry.
 */
export function parsePrivateAllowance(raw: string): PrivateAllowance {
  if (raw.trim() === '0') return false;
  if (raw.trim() === '1') return true;
  const networks: string[] = [];
  const hosts: string[] = [];
  for (const entry of raw.split(',').map((e) => e.trim().toLowerCase())) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (family !== 0 && extra === undefined && bits >= 0 && bits <= (family === 6 ? 128 : 32)) networks.push(`${address}/${bits}`);
    else if (prefix === undefined && family === 0 && HOST_NAME.test(entry.replace(/\.$/, ''))) hosts.push(entry.replace(/\.$/, ''));
    else throw new Error(`${JSON.stringify(entry)} is neither a CIDR (10.0.0.0/8, fd00::/8), an IP address nor a host name; give 0, 1, or a comma-separated list of those`);
  }
  return Object.freeze({ networks: Object.freeze(networks), hosts: Object.freeze(hosts) });
}

/** Whether `host` (a URL's host name) may be reached at the non-public `address` it resolved to. */
export function allowsPrivate(allowance: PrivateAllowance, host: string, address: string): boolean {
  if (typeof allowance === 'boolean') return allowance;
  if (allowance.hosts.includes(host.toLowerCase().replace(/\.$/, ''))) return true;
  const list = new BlockList();
  for (const network of allowance.networks) {
    const [base = '', bits] = network.split('/');
    list.addSubnet(base, Number(bits), isIP(base) === 6 ? 'ipv6' : 'ipv4');
  }
  const bare = address.replace(/%.*$/, '');
  return list.check(bare, isIP(bare) === 6 ? 'ipv6' : 'ipv4');
}
