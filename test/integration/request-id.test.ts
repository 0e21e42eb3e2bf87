import { startStack, type Stack } from '../helpers/stack';

/** The README promises a requestId on every error; these are the ones Apollo produces before any plugin runs. */
describe('requestId on errors Apollo itself produces', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });

  afterAll(async () => {
    await stack?.close();
  });

  const cases: [string, RequestInit & { search?: string }][] = [
    ['a CSRF refusal (GET without a preflight header)', { method: 'GET', search: '?query=%7B__typename%7D' }],
    [
      'a batch',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]) },
    ],
    ['an empty JSON body', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
    [
      'variables as a string',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }', variables: '{}' }) },
    ],
    ['PUT', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) }],
  ];

  it.each(cases)('%s', async (_name, { search = '', ...init }) => {
    const response = await fetch(`${stack.gateway.url}/graphql${search}`, init);
    expect(response.status).toBeGreaterThanOrEqual(400);
    const requestId = response.headers.get('x-request-id');
    const body = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(body.errors.length).toBeGreaterThan(0);
    for (const error of body.errors) {
      expect(error.message.length).toBeGreaterThan(10);
      expect(error.extensions.requestId).toBe(requestId);
    }
  });
});
