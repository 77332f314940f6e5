import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

/** Longest callback_url accepted (characters). */
export const MAX_CALLBACK_URL_LENGTH = 2048

/**
 * Addresses a webhook must not reach unless the operator allows it: the service's own host and
 * network (loopback, private, link-local with the cloud metadata address, CGNAT, unspecified,
 * multicast, broadcast, documentation and benchmarking ranges) in IPv4 and IPv6, and IPv6 forms
 * that carry an IPv4 address (mapped, NAT64).
 */
const PRIVATE = (() => {
  const list = new BlockList()
  for (const [net, prefix] of [
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
  ] as const)
    list.addSubnet(net, prefix, 'ipv4')
  for (const [net, prefix] of [
    ['::', 128],
    ['::1', 128],
    ['::ffff:0:0', 96],
    ['64:ff9b::', 96],
    ['100::', 64],
    ['2001:db8::', 32],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ] as const)
    list.addSubnet(net, prefix, 'ipv6')
  return list
})()

/** Whether an IP address (v4 or v6) is one a webhook must not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/** Why a callback_url is refused (the 400's rule text), or undefined when it is acceptable. */
export async function callbackUrlProblem(value: string, options: { allowPrivate: boolean }): Promise<string | undefined> {
  if (value.length > MAX_CALLBACK_URL_LENGTH) return `a URL of at most ${MAX_CALLBACK_URL_LENGTH} characters`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'an absolute http:// or https:// URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'an absolute http:// or https:// URL'
  if (url.username || url.password) return 'a URL without credentials'
  if (options.allowPrivate) return undefined
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address)
  } catch {
    return `a URL whose host resolves (${host} does not)`
  }
  // Every address a name resolves to: one public record beside a private one must not open the door.
  if (addresses.length === 0 || addresses.some(isPrivateAddress))
    return 'a URL that does not reach a loopback, private or link-local address'
  return undefined
}
