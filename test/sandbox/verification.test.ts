import { isValidIban } from '../../src/sandbox/fixtures/bank-details';
import { matchScore, normaliseName, VERIFIED_THRESHOLD } from '../../src/sandbox/verification/name-match';
import { bearer, getAppToken, getUserToken, tokenRequest, type TokenResponse } from '../helpers/sandbox-auth';
import { advanceClock, request, useSandbox, type RawResponse } from '../helpers/sandbox-server';

const PROBLEM_BASE = 'https://docs.truelayer.com/docs/error-types#';

function verify(url: string, token: string | TokenResponse | undefined, body: unknown, path = '/v1/verification'): Promise<RawResponse> {
  return request(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : bearer(token)) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function expectProblem(response: RawResponse, status: number, slug: string): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(response.body).toMatchObject({
    type: PROBLEM_BASE + slug,
    title: expect.any(String),
    status,
    detail: expect.any(String),
    trace_id: expect.any(String),
  });
}

describe('name matching', () => {
  it.each([
    ['John Doe', 'John Doe', 100],
    ['  JOHN   doe ', 'John Doe', 100],
    ['Mr. John Doe', 'John Doe', 100],
    ['Dr John Doe', 'Mr John Doe', 100],
    ['Zoe Ng', 'Zoë Ng', 100],
    ['ZOË NG', 'Zoë Ng', 100],
    ['Lee Ming Hao', 'Lee Ming-Hao', 100],
    ['Lee Minghao', 'Lee Ming-Hao', 100],
    ['Sean OBrien', "Seán O'Brien", 100],
    ['Søren Kierkegaard', 'Soren Kierkegaard', 100],
    ['Doe John', 'John Doe', 95],
    ['Minghao Lee', 'Lee Ming-Hao', 95],
    ['Jon Doe', 'John Doe', 88],
    ['Jonh Doe', 'John Doe', 88],
    ['John A Doe', 'John Doe', 80],
    ['J Doe', 'John Doe', 75],
    ['John', 'John Doe', 67],
    ['Jane Doe', 'John Doe', 50],
    ['John Smith', 'John Doe', 50],
    ['Alice Wonderland', 'John Doe', 0],
  ])('%s against %s scores %d', (submitted, holder, score) => {
    expect(matchScore(submitted, holder)).toBe(score);
  });

  it('is symmetric on these examples and only a full match reaches 100', () => {
    expect(matchScore('John Doe', 'Jon Doe')).toBe(matchScore('Jon Doe', 'John Doe'));
    expect(matchScore('Doe John', 'John Doe')).toBeLessThan(100);
  });

  it('keeps a name made only of titles rather than matching it to everything', () => {
    expect(normaliseName('Dr')).toEqual(['dr']);
    expect(matchScore('Mr', 'John Doe')).toBe(0);
  });

  it('documents the threshold as 80', () => {
    expect(VERIFIED_THRESHOLD).toBe(80);
  });
});

describe('POST /v1/verification', () => {
  const sandbox = useSandbox();
  let john: TokenResponse;
  let lee: TokenResponse;
  beforeAll(async () => {
    john = await getUserToken(sandbox(), { username: 'john', password: 'doe' });
    lee = await getUserToken(sandbox(), { username: 'lee', password: 'doe' });
  });

  it('verifies a full match with score 100 and reports every account of the user', async () => {
    const response = await verify(sandbox().url, john, { name: 'John Doe' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const fixtures = sandbox().context.fixtures.users.find((user) => user.username === 'john')!;
    expect(response.body).toEqual({
      verified: true,
      account_holder_name: 'John Doe',
      match_score: 100,
      report: fixtures.accounts.map(({ account }) => ({
        verifiable: true,
        currency: account.currency,
        provider_id: 'mock',
        account_type: account.account_type === 'SAVINGS' ? 'SAVINGS' : 'CURRENT',
        account_holders: [{ name: 'John Doe', verified: true, match_score: 100 }],
        display_name: account.display_name,
        iban: account.account_number.iban,
        swift_bic: account.account_number.swift_bic,
        account_number: account.account_number.number,
        sort_code: account.account_number.sort_code,
      })),
    });
    const report = response.body.report as { account_type: string; currency: string; iban: string; sort_code: string; account_number: string }[];
    expect(report.map((entry) => [entry.account_type, entry.currency])).toEqual([
      ['CURRENT', 'GBP'],
      ['SAVINGS', 'GBP'],
      ['CURRENT', 'EUR'],
    ]);
    for (const entry of report) {
      expect(isValidIban(entry.iban)).toBe(true);
      expect(entry.sort_code).toMatch(/^\d\d-\d\d-\d\d$/);
      expect(entry.iban).toBe(`${entry.iban.slice(0, 8)}${entry.sort_code.replace(/-/g, '')}${entry.account_number}`);
    }
  });

  it('accepts the path with a trailing slash', async () => {
    const response = await verify(sandbox().url, john, { name: 'John Doe' }, '/v1/verification/');
    expect(response.status).toBe(200);
    expect(response.body.verified).toBe(true);
  });

  it.each(['JOHN DOE', 'john doe', 'Mr John Doe', 'Dr. John Doe', ' John  Doe '])('verifies the variant %j with 100, echoing it as submitted', async (name) => {
    const response = await verify(sandbox().url, john, { name });
    expect(response.body).toMatchObject({ verified: true, match_score: 100, account_holder_name: name });
  });

  it('verifies a close match below 100 but above the threshold', async () => {
    const response = await verify(sandbox().url, john, { name: 'Jon Doe' });
    expect(response.body).toMatchObject({ verified: true, match_score: 88 });
    expect(response.body.report[0].account_holders).toEqual([{ name: 'John Doe', verified: true, match_score: 88 }]);
  });

  it('does not verify a partial match below the threshold, but scores it', async () => {
    for (const [name, score] of [
      ['J Doe', 75],
      ['John', 67],
      ['Jane Doe', 50],
    ] as const) {
      const response = await verify(sandbox().url, john, { name });
      expect(response.body).toMatchObject({ verified: false, match_score: score });
      expect(response.body.report[0].account_holders[0]).toEqual({ name: 'John Doe', verified: false, match_score: score });
    }
  });

  it('scores a different name 0 and still reports the accounts', async () => {
    const response = await verify(sandbox().url, john, { name: 'Alice Wonderland' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ verified: false, match_score: 0 });
    expect(response.body.report).toHaveLength(3);
  });

  it('matches holder names with hyphens and diacritics', async () => {
    for (const name of ['Lee Ming-Hao', 'LEE MING HAO', 'lee minghao']) {
      const response = await verify(sandbox().url, lee, { name });
      expect(response.body).toMatchObject({ verified: true, match_score: 100 });
    }
  });

  it('checks every holder of a joint account; the overall result is the best holder', async () => {
    for (const name of ['Zoë Ng', 'Zoe Ng', 'Ms ZOE NG']) {
      const response = await verify(sandbox().url, lee, { name });
      expect(response.body).toMatchObject({ verified: true, match_score: 100, account_holder_name: name });
      const [single, joint] = response.body.report;
      expect(single.display_name).toBe('Current Account');
      expect(single.account_holders).toEqual([{ name: 'Lee Ming-Hao', verified: false, match_score: 0 }]);
      expect(joint.display_name).toBe('Joint Account');
      expect(joint.account_holders).toEqual([
        { name: 'Lee Ming-Hao', verified: false, match_score: 0 },
        { name: 'Zoë Ng', verified: true, match_score: 100 },
      ]);
    }
  });

  describe('authentication', () => {
    it('answers 401 unauthenticated without a token, with an unknown one, or a malformed header', async () => {
      expectProblem(await verify(sandbox().url, undefined, { name: 'John Doe' }), 401, 'unauthenticated');
      expectProblem(await verify(sandbox().url, 'not-a-token', { name: 'John Doe' }), 401, 'unauthenticated');
      const malformed = await request(`${sandbox().url}/v1/verification`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Token ${john.access_token}` },
        body: JSON.stringify({ name: 'John Doe' }),
      });
      expectProblem(malformed, 401, 'unauthenticated');
    });

    it('answers 403 forbidden for an application token or a user token without accounts', async () => {
      const app = await getAppToken(sandbox());
      const forbidden = await verify(sandbox().url, app, { name: 'John Doe' });
      expectProblem(forbidden, 403, 'forbidden');
      const narrowed = (await (
        await tokenRequest(sandbox(), { grant_type: 'refresh_token', refresh_token: john.refresh_token!, scope: 'info' })
      ).json()) as TokenResponse;
      const infoOnly = await verify(sandbox().url, narrowed.access_token, { name: 'John Doe' });
      expectProblem(infoOnly, 403, 'forbidden');
      expect(infoOnly.body.detail).toContain('accounts');
    });
  });

  describe('bad requests get 400 invalid-parameters', () => {
    it.each([
      ['a missing name', {}, 'is required'],
      ['a null name', { name: null }, 'is required'],
      ['a number', { name: 42 }, 'must be a string, got number'],
      ['an array', { name: ['John', 'Doe'] }, 'must be a string, got array'],
      ['an empty name', { name: '  ' }, 'must not be empty'],
      ['punctuation only', { name: '--!' }, 'must contain at least one letter'],
      ['digits only', { name: '123' }, 'must contain at least one letter'],
      ['digits and punctuation', { name: '42 - 7' }, 'must contain at least one letter'],
      ['a very long name', { name: 'J'.repeat(141) }, 'must be at most 140 characters'],
    ])('%s', async (_case, body, message) => {
      const response = await verify(sandbox().url, john, body);
      expectProblem(response, 400, 'invalid-parameters');
      expect(response.body.errors).toEqual({ name: [message] });
    });

    it('a body that is not an object', async () => {
      const response = await verify(sandbox().url, john, '["John Doe"]');
      expectProblem(response, 400, 'invalid-parameters');
      expect(response.body.errors).toEqual({ name: ['is required'] });
    });

    it('bad JSON', async () => {
      const response = await verify(sandbox().url, john, '{"name": "John');
      expectProblem(response, 400, 'invalid-parameters');
      expect(response.body.detail).toBe('the body is not valid JSON');
    });

    it('a wrong content type', async () => {
      const response = await request(`${sandbox().url}/v1/verification`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', ...bearer(john) },
        body: JSON.stringify({ name: 'John Doe' }),
      });
      expectProblem(response, 400, 'invalid-parameters');
      expect(response.body.detail).toContain('application/json');
    });

    it('a GET is 405 in the problem shape', async () => {
      expectProblem(await request(`${sandbox().url}/v1/verification`, { headers: bearer(john) }), 405, 'method-not-allowed');
    });
  });
});

describe('verification with an expired token', () => {
  const sandbox = useSandbox();

  it('answers 401 unauthenticated after 3600 s of sandbox time', async () => {
    const token = await getUserToken(sandbox(), { username: 'jane', password: 'doe' });
    expect((await verify(sandbox().url, token, { name: 'Jane Smith' })).body.verified).toBe(true);
    await advanceClock(sandbox(), 3600);
    const expired = await verify(sandbox().url, token, { name: 'Jane Smith' });
    expectProblem(expired, 401, 'unauthenticated');
    expect(expired.body.detail).toBe('the access token has expired');
  });
});
