import { parseDecimalJson } from '../../src/platform/provider/decimal-json';
import type { Fixtures, FixtureUser } from '../../src/sandbox/fixtures/types';

/**
 * The sandbox's seeded data, read over HTTP. Parsed keeping every number's digits (the fixtures hold amounts such
 * as 100.10), so assertions compare against exactly what the provider sends.
 */
export async function readFixtures(sandboxUrl: string): Promise<Fixtures> {
  const response = await fetch(`${sandboxUrl}/sandbox/fixtures`);
  if (!response.ok) throw new Error(`GET /sandbox/fixtures: HTTP ${response.status}`);
  return parseDecimalJson(await response.text()) as Fixtures;
}

/** A seeded login; `bank` picks among one person's logins at several banks (the first bank when omitted). */
export function userNamed(fixtures: Fixtures, username: string, bank = 'mock'): FixtureUser {
  const user = fixtures.users.find((candidate) => candidate.username === username && candidate.providerId === bank);
  if (!user) throw new Error(`no seeded user ${username}; seeded: ${fixtures.users.map((u) => u.username).join(', ')}`);
  return user;
}
