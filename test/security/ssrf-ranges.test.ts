import { describe, expect, it } from 'vitest';
import { fetchAllowedUrl, type ResolveHost } from '../../worker/agents/tools/fetch-allowed-url.js';
import { deliverWebhook, WebhookAddressError } from '../../worker/operations/webhooks/deliver-webhook.js';
import { isPublicAddress } from '../../worker/runtime/public-address.js';

/**
 * Attack: reach an internal address through an IPv6 range that a gateway translates
 * to IPv4 — NAT64 (`64:ff9b::/96`, local-use `64:ff9b:1::/48`), 6to4 (`2002::/16`), SIIT's translated
 * form (`::ffff:0:a.b.c.d`) and Teredo (`2001::/32`) — as a webhook URL, as an `http_fetch` URL, or as
 * what an allowlisted name resolves to. Expected answer: refused before any connection, by both SSRF
 * filters (webhooks and http_fetch share isPublicAddress). NAT64 with a public IPv4 inside stays
 * reachable: under DNS64 every IPv4-only host resolves into `64:ff9b::/96`.
 */
const TRANSLATED_INTERNAL = [
  '64:ff9b::7f00:1', // NAT64 → 127.0.0.1
  '64:ff9b::10.0.0.1', // NAT64 → 10.0.0.1
  '64:ff9b::a9fe:a9fe', // NAT64 → 169.254.169.254 (cloud metadata)
  '64:ff9b:1::a00:1', // local-use NAT64
  '2002:7f00:1::', // 6to4 of 127.0.0.1
  '2002:a9fe:a9fe::1', // 6to4 of 169.254.169.254
  '::ffff:0:7f00:1', // SIIT ::ffff:0:127.0.0.1
  '::ffff:0:10.0.0.1', // SIIT ::ffff:0:10.0.0.1
  '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
];

describe('SSRF through IPv6 translation ranges (issue 35 item 11)', () => {
  it('isPublicAddress refuses every translated internal address and still allows public ones', () => {
    expect(TRANSLATED_INTERNAL.filter(isPublicAddress)).toEqual([]);
    expect(['8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8'].every(isPublicAddress)).toBe(true);
  });

  it('a webhook to a translated internal address is refused before connecting', async () => {
    for (const address of TRANSLATED_INTERNAL) {
      const attempt = deliverWebhook({
        url: `http://[${address}]:8080/hook`,
        body: '{}',
        headers: {},
        timeoutMs: 2000,
        allowPrivate: false,
      });
      await expect(attempt, address).rejects.toBeInstanceOf(WebhookAddressError);
    }
  });

  it('http_fetch refuses a translated internal address, as a literal and as what a name resolves to', async () => {
    const resolve: ResolveHost = async (hostname) => [
      { address: TRANSLATED_INTERNAL[Number(hostname.split('.')[0]!.slice(1))]!, family: 6 },
    ];
    for (const [index, address] of TRANSLATED_INTERNAL.entries()) {
      // The allowlist holds the host as URL spells it (`64:ff9b::10.0.0.1` becomes `[64:ff9b::a00:1]`).
      const literal = new URL(`http://[${address}]/`).hostname;
      const options = { allowHosts: [literal, `h${index}.test`], maxBytes: 1024, timeoutMs: 2000, resolve };
      await expect(fetchAllowedUrl(`http://[${address}]/`, options), address).rejects.toThrow(
        /a private, loopback or link-local address; refused before connecting/,
      );
      await expect(fetchAllowedUrl(`http://h${index}.test/`, options), address).rejects.toThrow(
        new RegExp(`h${index}\\.test resolves to .*a private, loopback or link-local address`),
      );
    }
  });
});
