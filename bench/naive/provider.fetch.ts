import { GraphQLError } from 'graphql';
import type { NaiveContext } from './naive.context';

/**
 * The way most gateways call a REST API: global fetch and response.json() for every field that needs data, with
 * no DataLoader, no cache and no retries. Kept deliberately plain; it is the baseline, not a strawman: it still
 * runs sibling fields in parallel, because graphql-js does that for any resolver that returns a promise.
 */
export async function providerResults<T>(context: NaiveContext, path: string, query: Record<string, string | null | undefined> = {}): Promise<T[]> {
  if (!context.accessToken)
    throw new GraphQLError('Send the provider access token as "Authorization: Bearer <token>".', { extensions: { code: 'UNAUTHENTICATED' } });
  const url = new URL(path, context.dataUrl);
  for (const [name, value] of Object.entries(query)) if (value !== null && value !== undefined) url.searchParams.set(name, value);
  const response = await fetch(url, { headers: { authorization: `Bearer ${context.accessToken}` } });
  if (!response.ok) throw new GraphQLError(`The provider answered HTTP ${response.status} for ${path}.`, { extensions: { code: 'UPSTREAM_ERROR' } });
  const body = (await response.json()) as { results: T[] };
  return body.results;
}
