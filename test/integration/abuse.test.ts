import { startStack, type Stack } from '../helpers/stack';
import { connectWs, disposeWsClients, type LiveResult } from '../helpers/ws-client';

interface ErrorBody {
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

/**
 * Abusive operations are refused with the right code, over HTTP and WebSocket, while another client's ordinary
 * queries keep being answered the whole time.
 */
/**
 * The gateway's clock (the rate limiter's among the rest): real time, until a test freezes it and steps it. It never goes back, so buckets
 * touched while frozen refill normally once it resumes.
 */
class SteppedClock {
  private offset = 0;
  private frozenAt: number | undefined;

  readonly now = (): number => this.frozenAt ?? Date.now() + this.offset;

  /** Stops time `ahead` ms from now, at a whole millisecond so that steps refill whole tokens. */
  freeze(ahead: number): void {
    this.frozenAt = Math.ceil(this.now() + ahead);
  }

  advance(ms: number): void {
    if (this.frozenAt === undefined) throw new Error('advance() needs a frozen clock');
    this.frozenAt += ms;
  }

  resume(): void {
    if (this.frozenAt === undefined) return;
    this.offset = this.frozenAt - Date.now();
    this.frozenAt = undefined;
  }
}

describe('abuse', () => {
  const clock = new SteppedClock();
  let stack: Stack;
  let abuser: string;
  let bystander: string;

  beforeAll(async () => {
    stack = await startStack({ gateway: { clock: clock.now } });
    abuser = await stack.signIn('john', 'doe');
    bystander = await stack.signIn('jane', 'doe');
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function post(
    body: string,
    token?: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; headers: Headers; body: ErrorBody & { data?: unknown } }> {
    const response = await fetch(`${stack.gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body,
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as ErrorBody };
  }

  /** Runs the abuse while the bystander queries in a loop; every bystander query must succeed. */
  async function whileOthersAreServed<T>(abuse: () => Promise<T>): Promise<T> {
    let stop = false;
    const served: number[] = [];
    const bystanderLoop = (async () => {
      while (!stop) {
        const result = await stack.graphql('query Bystander { viewer { accounts { id displayName } } }', {}, bystander);
        expect(result.errors).toBeUndefined();
        served.push(result.status);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      return await abuse();
    } finally {
      stop = true;
      await bystanderLoop;
      expect(served.length).toBeGreaterThan(0);
      expect(served.every((status) => status === 200)).toBe(true);
    }
  }

  function expectLimit(errors: LiveResult<unknown>['errors'] | ErrorBody['errors'], limit: string): void {
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', reason: 'OPERATION_LIMIT', limit, requestId: expect.any(String) }),
        }),
      ]),
    );
  }

  async function overWebSocket(query: string, variables?: Record<string, unknown>, token = abuser): Promise<LiveResult<unknown>> {
    const ws = connectWs(stack.gateway.url, token);
    const subscription = ws.subscribe(query, variables);
    const result = await subscription.next();
    await subscription.ended;
    return result;
  }

  const deepQuery = (levels: number): string => {
    // __type → fields → type → fields …: valid GraphQL at any depth, which is exactly why depth must be limited.
    let selection = 'name';
    for (let level = 0; level < (levels - 2) / 2; level += 1) selection = `fields { type { ${selection} } }`;
    return `query Deep { __type(name: "Query") { ${selection} } }`;
  };

  it('refuses a query 50 levels deep (maxDepth), over HTTP and WebSocket', async () => {
    await whileOthersAreServed(async () => {
      const http = await post(JSON.stringify({ query: deepQuery(50) }), abuser);
      expect(http.status).toBe(400);
      expectLimit(http.body.errors, 'maxDepth');
      expect(http.body.errors![0]!.message).toMatch(/depth limit of 15 exceeded/);
      expectLimit((await overWebSocket(deepQuery(50))).errors, 'maxDepth');
    });
    // The deepest ordinary query is well within the limit.
    const ordinary = await post(
      JSON.stringify({ query: '{ viewer { accounts { transactions(first: 1) { edges { node { amount { amount } } } } } } }' }),
      abuser,
    );
    expect(ordinary.status).toBe(200);
    expect(ordinary.body.errors).toBeUndefined();
  });

  it('refuses 1000 aliases (maxAliases), over HTTP and WebSocket', async () => {
    const query = `query Aliases { viewer { accounts { ${Array.from({ length: 1000 }, (_, i) => `a${i}: id`).join(' ')} } } }`;
    await whileOthersAreServed(async () => {
      const http = await post(JSON.stringify({ query }), abuser);
      expect(http.status).toBe(400);
      expectLimit(http.body.errors, 'maxAliases');
      expectLimit((await overWebSocket(query)).errors, 'maxAliases');
    });
  });

  it('refuses a 1 MB query with 413 before reading it, and a 1 MB WebSocket message by closing the socket', async () => {
    const huge = JSON.stringify({ query: `query Huge { viewer { accounts { id } } } ${'#'.repeat(1024 * 1024)}` });
    await whileOthersAreServed(async () => {
      const http = await post(huge, abuser);
      expect(http.status).toBe(413);
      expectLimit(http.body.errors, 'maxBodyBytes');

      // graphql-ws reports the oversized frame on the console (its own code); it is expected here.
      const consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
      const ws = connectWs(stack.gateway.url, abuser);
      const subscription = ws.subscribe(`query Huge { viewer { accounts { id } } } ${'#'.repeat(1024 * 1024)}`);
      const ended = await subscription.ended;
      consoleError.mockRestore();
      // ws closes with 1009 (message too big) when a frame exceeds maxPayload.
      expect(ended.completed).toBe(false);
      expect((ended.error as { code?: number }).code).toBe(1009);
    });
  });

  it('refuses a document of more tokens than the limit, even under the body size limit (maxTokens)', async () => {
    const query = `query Tokens { viewer { accounts { id ${'__typename '.repeat(6000)} } } }`;
    const http = await post(JSON.stringify({ query }), abuser);
    expect(http.status).toBe(400);
    expectLimit(http.body.errors, 'maxTokens');
    expectLimit((await overWebSocket(query)).errors, 'maxTokens');
  });

  it('refuses a cost bomb on transactions (maxCost), weighing `first` whether literal or a variable', async () => {
    const accounts = (first: string) =>
      Array.from(
        { length: 5 },
        (_, a) =>
          `a${a}: accounts { ${Array.from({ length: 5 }, (_, t) => `t${t}: transactions(first: ${first}) { nodes { id amount { amount } } }`).join(' ')} }`,
      ).join(' ');
    const literal = `query Bomb { viewer { ${accounts('100')} } }`;
    const variable = `query Bomb($n: Int) { viewer { ${accounts('$n')} } }`;
    await whileOthersAreServed(async () => {
      const http = await post(JSON.stringify({ query: literal }), abuser);
      expect(http.status).toBe(400);
      expectLimit(http.body.errors, 'maxCost');
      expect(http.body.data).toBeUndefined();

      const viaVariable = await post(JSON.stringify({ query: variable, variables: { n: 100 } }), abuser);
      expect(viaVariable.status).toBe(400);
      expectLimit(viaVariable.body.errors, 'maxCost');

      expectLimit((await overWebSocket(variable, { n: 100 })).errors, 'maxCost');
    });
    // The same shape asking for one transaction per list is cheap enough to run.
    const small = await post(JSON.stringify({ query: variable, variables: { n: 1 } }), abuser);
    expect(small.status).toBe(200);
    expect(small.body.errors).toBeUndefined();
  });

  it('rate-limits 200 requests a second from one principal: 429 with Retry-After, and FORBIDDEN / RATE_LIMITED over WebSocket', async () => {
    const flood = JSON.stringify({ query: 'query Flood { viewer { accounts { id } } }' });
    const statuses: number[] = [];
    const refusals: { retryAfter: string | null; body: ErrorBody }[] = [];
    // Ten seconds on, every bucket is full (60 tokens, 20 a second); then time moves only when the test says.
    clock.freeze(10_000);
    try {
      // 200 requests over one second of the limiter's time, in ten bursts of twenty, the bystander served in each.
      for (let burst = 0; burst < 10; burst += 1) {
        if (burst > 0) clock.advance(100);
        const [bystanderAnswer, ...answers] = await Promise.all([
          stack.graphql('query Bystander { viewer { accounts { id } } }', {}, bystander),
          ...Array.from({ length: 20 }, () => post(flood, abuser)),
        ]);
        expect(bystanderAnswer.status).toBe(200);
        for (const answer of answers) {
          statuses.push(answer.status);
          if (answer.status === 429) refusals.push({ retryAfter: answer.headers.get('retry-after'), body: answer.body });
        }
      }
      // The burst of 60 plus 18 tokens refilled over the 0.9 s between bursts; nothing else is answered.
      expect(statuses.filter((status) => status === 200)).toHaveLength(78);
      expect(refusals).toHaveLength(122);
      for (const refusal of refusals) {
        expect(refusal.retryAfter).toBe('1');
        expect(refusal.body.errors![0]!.extensions).toMatchObject({
          code: 'FORBIDDEN',
          reason: 'RATE_LIMITED',
          retryAfterSeconds: 1,
          requestId: expect.any(String),
        });
      }

      // The allowance is shared across transports: the empty bucket refuses the same principal over WebSocket.
      const ws = await overWebSocket('query Flood { viewer { accounts { id } } }');
      expect(ws.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'RATE_LIMITED', retryAfterSeconds: 1, requestId: expect.any(String) });

      // The allowance comes back: after the advertised wait, the same principal is served again.
      clock.advance(1_000);
      expect((await post(JSON.stringify({ query: '{ viewer { accounts { id } } }' }), abuser)).status).toBe(200);
    } finally {
      clock.resume();
    }
  });

  it('limits sign-in attempts per address, on an allowance of their own', async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, () => fetch(`${stack.gateway.url}/auth/login?response=json`, { redirect: 'manual' })));
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused[0]!.json()).toMatchObject({ error: { code: 'FORBIDDEN', requestId: expect.any(String) } });
    expect(answers.filter((answer) => answer.status === 302).length).toBeGreaterThanOrEqual(60);
    // GraphQL from signed-in principals is not affected.
    expect((await stack.graphql('{ viewer { accounts { id } } }', {}, bystander)).status).toBe(200);
  });

  it('counts anonymous callers by address, so a made-up token does not earn a fresh allowance', async () => {
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) => post(JSON.stringify({ query: '{ __typename }' }), undefined, { authorization: `Bearer made-up-token-${i}` })),
    );
    expect(answers.some((answer) => answer.status === 429)).toBe(true);
    // Signed-in principals have allowances of their own.
    expect((await stack.graphql('{ viewer { accounts { id } } }', {}, bystander)).status).toBe(200);
  });
});
