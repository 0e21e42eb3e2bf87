import { Writable } from 'node:stream';
import { createLogger, maskIbans, maskLiterallyIn, maskSecretsInText, sanitizeForLog } from '../../src/platform/observability/logger';

/** The log sanitizer on its own: whatever a future change logs by mistake, credentials and IBANs stay out. */
describe('log sanitising', () => {
  const sessionToken = 'hJ8kVq2Xr7Lm0PzT5nYw3sA9dF6gB1cE4uI8oK2jH7q';
  const jwt = 'eyJhbGciOiJFUzUxMiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlLXZhbHVlLWhlcmU';
  const iban = 'GB33BUKB20201555555555';

  function capture(): { lines: () => Record<string, unknown>[]; text: () => string; logger: ReturnType<typeof createLogger> } {
    const chunks: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    return {
      logger: createLogger('trace', sink),
      text: () => chunks.join(''),
      lines: () =>
        chunks
          .join('')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>),
    };
  }

  it('removes values under secret-sounding keys at any depth', () => {
    const out = sanitizeForLog({
      req: { headers: { authorization: `Bearer ${sessionToken}`, cookie: `bankgraph_session=${sessionToken}`, 'x-request-id': 'abc' } },
      body: { access_token: jwt, refresh_token: 'r', nested: { deeper: { client_secret: 's3cr3t', beneficiary_iban: iban, amount: 10 } } },
      session: { sessionToken, tokens: { accessToken: jwt } },
      merchantKeys: ['key-1'],
      privateKeyPem: '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----',
      tokenEndpoint: true,
    }) as Record<string, Record<string, unknown>>;
    const text = JSON.stringify(out);
    for (const secret of [sessionToken, jwt, 's3cr3t', iban, 'key-1', 'BEGIN PRIVATE KEY']) expect(text).not.toContain(secret);
    expect(out.req!.headers).toMatchObject({ authorization: '[redacted]', cookie: '[redacted]', 'x-request-id': 'abc' });
    expect(text).toContain('"amount":10');
    // Booleans are kept: `tokenEndpoint: true` says nothing secret.
    expect(out.tokenEndpoint).toBe(true);
  });

  it('recognises secret keys whatever their case, hyphens or underscores, card and one-time codes included', () => {
    const secretFields = {
      'X-Api-Key': 'api-key-value',
      'x-api-key': 'api-key-value-2',
      'client-secret': 'client-secret-value',
      CLIENT_SECRET: 'client-secret-value-2',
      'Login-Binding': 'login-binding-value',
      login_binding: 'login-binding-value-2',
      credential: 'credential-value',
      Credentials: 'credentials-value',
      passphrase: 'passphrase-value',
      card_number: '4111111111111111',
      cardNumber: '4000056655665556',
      PAN: '5555555555554444',
      CVV: 'cvv-value-123',
      cvc: 'cvc-value-456',
      'security-code': 'security-code-value',
      pin: 'pin-value-1234',
      PIN_CODE: 'pin-code-value',
      otp: 'otp-value-654321',
      'one-time-password': 'one-time-password-value',
      'Code-Verifier': 'code-verifier-value',
    };
    const out = sanitizeForLog({ headers: secretFields, spinner: 'kept', option: 'kept', pinned: 'kept', cardBrand: 'visa' }) as Record<string, unknown>;
    const text = JSON.stringify(out);
    for (const value of Object.values(secretFields)) expect(text).not.toContain(value);
    expect(out).toMatchObject({ spinner: 'kept', option: 'kept', pinned: 'kept', cardBrand: 'visa' });
  });

  it('masks the configured merchant keys literally in free text, however short or plain they are', () => {
    const { logger, text } = capture();
    const letters = 'OnlyLettersMerchantKey';
    const short = 'mk-2024-abcdefgh';
    maskLiterallyIn(logger, [letters, short]);
    const child = logger.child({ component: 'test' });
    child.warn({ err: new Error(`unknown key ${letters}`), note: `pasted ${short} here`, [short]: 1 }, `Variable "$n" got invalid value "${short}"`);
    logger.info(`key=${letters}`);
    const written = text();
    expect(written).toContain('[redacted]');
    expect(written).not.toContain(letters);
    expect(written).not.toContain(short);
  });

  it('masks secrets used as keys, at any depth, keeping every entry', () => {
    const { logger, text } = capture();
    const providerBody = { results: { [sessionToken]: { ok: true }, [jwt]: 1, [iban]: { balance: 5 }, nested: { [`Bearer ${sessionToken}`]: 'x' } } };
    logger.warn({ err: Object.assign(new Error('provider call failed'), { body: providerBody }) }, 'provider error');
    const written = text();
    for (const secret of [sessionToken, jwt, iban]) expect(written).not.toContain(secret);
    const sanitized = sanitizeForLog(providerBody) as { results: Record<string, unknown> };
    expect(Object.keys(sanitized.results)).toEqual(['[redacted]', '[redacted]#2', 'GB33****5555', 'nested']);
  });

  it('blanks credentials inside free text: messages, URLs, provider bodies, stacks', () => {
    const text = maskSecretsInText(
      `call failed: Authorization: Bearer ${sessionToken}; token ${jwt}; url /webhooks/data/task-secret-123?x=1 and /auth/callback?code=abc123def456&state=zzz; iban ${iban}; opaque ${sessionToken}`,
    );
    for (const secret of [sessionToken, jwt, 'task-secret-123', 'abc123def456', iban]) expect(text).not.toContain(secret);
    expect(text).toContain('GB33****5555');
    // Request ids (UUIDs) and ordinary words stay readable.
    expect(maskSecretsInText('request 3f3a6bc1-5ae0-4431-a45c-c5aec0d052c5 failed')).toBe('request 3f3a6bc1-5ae0-4431-a45c-c5aec0d052c5 failed');
  });

  it('masks IBANs keeping country, check digits and the last four characters', () => {
    expect(maskIbans(`to ${iban} and DE89370400440532013000`)).toBe('to GB33****5555 and DE89****3000');
  });

  it('serialises errors with their own fields and causes, sanitised', () => {
    const { logger, lines } = capture();
    const cause = new Error(`socket hang up while sending Bearer ${sessionToken}`);
    const error = Object.assign(new Error(`provider said: account ${iban} unknown`, { cause }), {
      body: { access_token: jwt, detail: `iban ${iban}` },
      status: 400,
    });
    logger.error({ err: error, requestId: 'r-1' }, `failed for ${iban}`);
    const [line] = lines();
    expect(line).toMatchObject({
      level: 'error',
      requestId: 'r-1',
      msg: 'failed for GB33****5555',
      err: { type: 'Error', status: 400, body: { access_token: '[redacted]', detail: 'iban GB33****5555' } },
    });
    const text = JSON.stringify(line);
    for (const secret of [sessionToken, jwt, iban]) expect(text).not.toContain(secret);
    expect(text).toContain('socket hang up');
  });

  it('survives cycles, buffers and very deep or long values', () => {
    const cyclic: Record<string, unknown> = { name: 'a' };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 50; i += 1) deep = { deep };
    const out = sanitizeForLog({ cyclic, deep, buffer: Buffer.from('secret bytes'), list: Array.from({ length: 500 }, (_, i) => i) }) as Record<
      string,
      unknown
    >;
    expect((out.cyclic as Record<string, unknown>).self).toBe('[circular]');
    expect(out.buffer).toBe('[12 bytes]');
    expect((out.list as unknown[]).length).toBe(101);
    expect(JSON.stringify(out.deep)).toContain('[truncated]');
  });
});
