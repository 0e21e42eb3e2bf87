import { requestUrl } from '../http/request-url';

/**
 * The route label of an HTTP request: a fixed pattern, never the raw path, so the label set stays small and a
 * data webhook's per-task secret (its last path segment) never reaches /metrics.
 */
export function routeLabel(rawUrl: string | undefined): string {
  const path = requestUrl({ url: rawUrl }).pathname;
  if (['/graphql', '/', '/healthz', '/readyz', '/metrics', '/auth/login', '/auth/callback', '/auth/logout', '/webhooks/payments'].includes(path)) return path;
  if (path.startsWith('/webhooks/data/')) return '/webhooks/data/:token';
  if (path.startsWith('/playground/assets/')) return '/playground/assets/*';
  return 'other';
}
