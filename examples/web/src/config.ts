/**
 * Where the gateway is: `?gateway=` on the app's own address wins (one build served against any gateway), then
 * VITE_GATEWAY_URL at build time, then `npm start`'s default.
 */
export const GATEWAY_URL = (new URLSearchParams(window.location.search).get('gateway') ?? import.meta.env.VITE_GATEWAY_URL ?? 'http://localhost:4000').replace(
  /\/+$/,
  '',
);

/** The address the bank's sign-in comes back to: this page, with its query (so `?gateway=` survives the round trip). */
export function appAddress(): string {
  return `${window.location.origin}${window.location.pathname}${window.location.search}`;
}
