import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { generateSigningKey, signJws, verifyJws, type SignedParts } from '../../src/sandbox/signing';

const signer = { kid: 'unit-key', ...generateSigningKey() };
const keys = new Map<string, KeyObject>([[signer.kid, signer.publicKey]]);
const keyFor = (kid: string) => keys.get(kid);

const request: SignedParts = {
  method: 'POST',
  path: '/v3/payments/0b5e/refunds',
  headers: { 'Idempotency-Key': '6f0a3a52-6d1d-4f5c-9b1e-0d9a1c2b3e4f', 'Content-Type': 'application/json' },
  body: '{"reference":"Refund 1"}',
};

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decodeHeader = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8'));

/** A JWS with an arbitrary header and a real signature part, to test header checks in isolation. */
function withHeader(header: unknown): string {
  const signature = signJws(request, { kid: signer.kid, privateKey: signer.privateKey }).split('.')[2];
  return `${b64(header)}..${signature}`;
}

describe('signJws', () => {
  it('makes a detached compact JWS with the README header', () => {
    const jws = signJws(request, { kid: signer.kid, privateKey: signer.privateKey, signedHeaders: ['Idempotency-Key'] });
    const [header, payload, signature] = jws.split('.');
    expect(payload).toBe('');
    expect(decodeHeader(jws)).toEqual({ alg: 'ES512', kid: 'unit-key', tl_version: '2', tl_headers: 'Idempotency-Key' });
    expect(header).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(signature!, 'base64url')).toHaveLength(132);
  });

  it('signs "<METHOD> <path>\\n" + each signed header line + the body bytes', () => {
    const jws = signJws(request, { kid: signer.kid, privateKey: signer.privateKey, signedHeaders: ['Idempotency-Key'] });
    const [header, , signature] = jws.split('.');
    const payload = `POST /v3/payments/0b5e/refunds\nIdempotency-Key: 6f0a3a52-6d1d-4f5c-9b1e-0d9a1c2b3e4f\n{"reference":"Refund 1"}`;
    const input = `${header}.${Buffer.from(payload).toString('base64url')}`;
    expect(verify('sha512', Buffer.from(input), { key: signer.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature!, 'base64url'))).toBe(true);
  });

  it('puts jku in the header when given, and an empty tl_headers when nothing is signed', () => {
    const jws = signJws(request, { kid: signer.kid, privateKey: signer.privateKey, jku: 'http://127.0.0.1:4010/.well-known/jwks' });
    expect(decodeHeader(jws)).toMatchObject({ tl_headers: '', jku: 'http://127.0.0.1:4010/.well-known/jwks' });
  });
});

describe('verifyJws', () => {
  const signed = signJws(request, { kid: signer.kid, privateKey: signer.privateKey, signedHeaders: ['Idempotency-Key'] });

  it('accepts the request it was made for, and returns the header', () => {
    expect(verifyJws(signed, request, keyFor, ['Idempotency-Key'])).toEqual({ ok: true, header: decodeHeader(signed) });
  });

  it('finds signed headers whatever their case in the request, and the body as a Buffer is the same bytes', () => {
    const lowerCased = { ...request, headers: { 'idempotency-key': request.headers['Idempotency-Key'] }, body: Buffer.from(request.body) };
    expect(verifyJws(signed, lowerCased, keyFor, ['idempotency-key']).ok).toBe(true);
  });

  it('accepts a GET with an empty body', () => {
    const get: SignedParts = { method: 'GET', path: '/v3/payments/0b5e/refunds', headers: {}, body: '' };
    expect(verifyJws(signJws(get, { kid: signer.kid, privateKey: signer.privateKey }), get, keyFor).ok).toBe(true);
  });

  it.each<[string, Partial<SignedParts>]>([
    ['one body byte changed', { body: '{"reference":"Refund 2"}' }],
    ['a body with whitespace added', { body: '{"reference": "Refund 1"}' }],
    ['another method', { method: 'PUT' }],
    ['another path', { path: '/v3/payments/0b5f/refunds' }],
    ['another Idempotency-Key', { headers: { 'Idempotency-Key': '00000000-0000-4000-8000-000000000000' } }],
    ['the signed header removed', { headers: {} }],
  ])('refuses the request with %s', (_case, change) => {
    expect(verifyJws(signed, { ...request, ...change }, keyFor)).toEqual({ ok: false, reason: 'the signature does not match the request' });
  });

  it('ignores headers that were not signed', () => {
    expect(verifyJws(signed, { ...request, headers: { ...request.headers, 'X-Extra': 'anything' } }, keyFor).ok).toBe(true);
  });

  describe('mustSign', () => {
    it('refuses a valid signature that does not cover a required header', () => {
      const uncovered = signJws(request, { kid: signer.kid, privateKey: signer.privateKey });
      expect(verifyJws(uncovered, request, keyFor)).toMatchObject({ ok: true });
      expect(verifyJws(uncovered, request, keyFor, ['Idempotency-Key'])).toEqual({ ok: false, reason: 'tl_headers must include Idempotency-Key' });
    });

    it('matches header names case-insensitively and tolerates spaces in tl_headers', () => {
      const spaced = signJws(request, { kid: signer.kid, privateKey: signer.privateKey, signedHeaders: ['content-type', 'idempotency-key'] });
      expect(verifyJws(spaced, request, keyFor, ['Idempotency-Key']).ok).toBe(true);
    });
  });

  describe('bad header shapes', () => {
    it.each<[string, string | undefined, RegExp]>([
      ['no signature', undefined, /missing/],
      ['an empty string', '', /missing/],
      ['one part', 'abc', /detached/],
      ['an attached payload', `${b64({ alg: 'ES512' })}.cGF5bG9hZA.c2ln`, /detached/],
      ['four parts', 'a..b.c', /detached/],
      ['a header that is not JSON', `${Buffer.from('not json').toString('base64url')}..c2ln`, /not base64url-encoded JSON/],
    ])('refuses %s', (_case, jws, reason) => {
      const result = verifyJws(jws, request, keyFor);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(reason);
    });

    it.each<[string, unknown, RegExp]>([
      ['JSON null', null, /must be a JSON object/],
      ['a JSON number', 42, /must be a JSON object/],
      ['a JSON array', ['ES512'], /must be a JSON object/],
      ['alg none', { alg: 'none', kid: 'unit-key', tl_version: '2' }, /alg must be ES512, got none/],
      ['alg RS256', { alg: 'RS256', kid: 'unit-key', tl_version: '2' }, /alg must be ES512/],
      ['no alg', { kid: 'unit-key', tl_version: '2' }, /alg must be ES512/],
      ['no tl_version', { alg: 'ES512', kid: 'unit-key' }, /tl_version must be "2"/],
      ['tl_version 1', { alg: 'ES512', kid: 'unit-key', tl_version: '1' }, /tl_version/],
      ['an unknown kid', { alg: 'ES512', kid: 'someone-else', tl_version: '2' }, /no public key is registered for kid "someone-else"/],
      ['a numeric kid', { alg: 'ES512', kid: 7, tl_version: '2' }, /no public key is registered/],
      ['no kid', { alg: 'ES512', tl_version: '2' }, /no public key is registered/],
      ['tl_headers that is not a string', { alg: 'ES512', kid: 'unit-key', tl_version: '2', tl_headers: ['Idempotency-Key'] }, /tl_headers must be/],
    ])('refuses a header with %s, saying why', (_case, header, reason) => {
      const result = verifyJws(withHeader(header), request, keyFor);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(reason);
    });

    it('refuses a signature of the wrong length or encoding without throwing', () => {
      const [header] = signed.split('.');
      for (const signature of ['', 'AAAA', Buffer.alloc(200).toString('base64url'), '!!not base64!!']) {
        expect(verifyJws(`${header}..${signature}`, request, keyFor, ['Idempotency-Key'])).toEqual({
          ok: false,
          reason: 'the signature does not match the request',
        });
      }
    });

    it('refuses, without throwing, a kid whose registered key is not P-521', () => {
      const others = new Map<string, KeyObject>([
        ['p256', generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey],
        ['ed25519', generateKeyPairSync('ed25519').publicKey],
        ['rsa', generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey],
      ]);
      for (const kid of others.keys()) {
        const result = verifyJws(withHeader({ alg: 'ES512', kid, tl_version: '2' }), request, (id) => others.get(id));
        expect(result).toEqual({ ok: false, reason: `the key registered for kid "${kid}" is not an EC P-521 key, which ES512 needs` });
      }
    });

    it('refuses a signature made by another P-521 key under the registered kid', () => {
      const impostor = generateSigningKey();
      const forged = signJws(request, { kid: signer.kid, privateKey: impostor.privateKey, signedHeaders: ['Idempotency-Key'] });
      expect(verifyJws(forged, request, keyFor)).toEqual({ ok: false, reason: 'the signature does not match the request' });
    });
  });
});
