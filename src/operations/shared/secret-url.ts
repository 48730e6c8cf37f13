/**
 * What is shown of a URL that is itself a secret (a webhook's, a chat channel's: whoever holds it
 * can post there) to those who may not manage it: its origin, as `https://hooks.example/...`.
 */
export function urlOrigin(url: string): string {
  return URL.canParse(url) ? `${new URL(url).origin}/...` : '...';
}
