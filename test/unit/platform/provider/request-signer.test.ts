import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { decodeJwsHeader, SignatureReuse, signRequest, verifyRequestSignature, type SignableRequest } from '../../../../src/platform/provider/request-signer';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const key = { keyId: 'test-key-1', privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };

const refund: SignableRequest = {
  method: 'POST',
  path: '/v3/payments/pay_123/refunds',
  headers: { 'Idempotency-Key': '5f0c7e2a-1b3d-4c5e-8f90-a1b2c3d4e5f6', authorization: 'Bearer not-signed' },
  body: '{"amount_in_minor":100,"reference":"ref-1"}',
};

// Computed once, by hand, with node:crypto alone (not this module): the header JSON below, base64url-encoded,
// and an ES512 signature over `<header>.<base64url(payload)>` for the `refund` request above.
const VECTOR_HEADER_JSON = '{"alg":"ES512","kid":"test-key-1","tl_version":"2","tl_headers":"Idempotency-Key"}';
const VECTOR_HEADER_B64 = 'eyJhbGciOiJFUzUxMiIsImtpZCI6InRlc3Qta2V5LTEiLCJ0bF92ZXJzaW9uIjoiMiIsInRsX2hlYWRlcnMiOiJJZGVtcG90ZW5jeS1LZXkifQ';
const VECTOR_PAYLOAD = 'POST /v3/payments/pay_123/refunds\nIdempotency-Key: 5f0c7e2a-1b3d-4c5e-8f90-a1b2c3d4e5f6\n{"amount_in_minor":100,"reference":"ref-1"}';
const VECTOR_JWS =
  `${VECTOR_HEADER_B64}..AJlcLIj-SJuqajmNwSVjSwDVL9sG1Qz2D1R9pljr86ogXnOFiytKOLlkUqIm8KOZMGUn7J_MnXJYEe3LL9GZ1_zMAXmdbigJ` +
  'fgvLRs4WkJI7gxK_lAmQrTvfoVVsJ2zmfBz5Ju69tp27ExVEf5v_qSKuYoJTv2UFlWogNbxlEsii2Mlo';
const VECTOR_PUBLIC_KEY = createPublicKey({
  format: 'jwk',
  key: {
    kty: 'EC',
    crv: 'P-521',
    x: 'AJgFv7bqKhcn5vS2IBKgYZ2T-NTbBIQhKsUPZjK95J4XyC8wybm4Fu3ys_e_ayoJj2mHJX3NV8RmIMwHpe2pDR2w',
    y: 'AVjcMneP1kATN2zzOfa_iASxTM0t5pK_JJwIkKcWP3gJoh7EjIDjuVNZQyvsNE61pAjRD7ETstFWa__6fNLMAKIy',
  },
});

describe('signRequest / verifyRequestSignature', () => {
  it('builds exactly the README header and signs the hand-built signing input', () => {
    expect(Buffer.from(VECTOR_HEADER_JSON).toString('base64url')).toBe(VECTOR_HEADER_B64);
    const jws = signRequest(refund, key, { signedHeaders: ['Idempotency-Key'] });
    const [header, payload, signature] = jws.split('.');
    expect(header).toBe(VECTOR_HEADER_B64);
    expect(payload).toBe('');
    const input = `${VECTOR_HEADER_B64}.${Buffer.from(VECTOR_PAYLOAD).toString('base64url')}`;
    const raw = Buffer.from(signature!, 'base64url');
    expect(raw).toHaveLength(132); // r‖s, 66 bytes each for P-521
    expect(verify('sha512', Buffer.from(input), { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
  });

  it('verifies the fixed vector, and rejects it for any other request', () => {
    expect(verifyRequestSignature(VECTOR_JWS, refund, VECTOR_PUBLIC_KEY)).toBe(true);
    expect(verifyRequestSignature(VECTOR_JWS, { ...refund, body: refund.body.toString().replace('100', '101') }, VECTOR_PUBLIC_KEY)).toBe(false);
  });

  it('round-trips with an empty tl_headers for GETs and headerless POSTs', () => {
    const get = { method: 'GET', path: '/v3/payments/p/refunds', headers: {}, body: '' };
    const jws = signRequest(get, key);
    expect(decodeJwsHeader(jws)).toEqual({ alg: 'ES512', kid: 'test-key-1', tl_version: '2', tl_headers: '' });
    expect(verifyRequestSignature(jws, get, publicKey)).toBe(true);
  });

  it('breaks when one byte of body, path, method or a signed header changes', () => {
    const jws = signRequest(refund, key, { signedHeaders: ['Idempotency-Key'] });
    expect(verifyRequestSignature(jws, refund, publicKey)).toBe(true);
    const body = Buffer.from(refund.body);
    body[body.length - 2] ^= 1;
    expect(verifyRequestSignature(jws, { ...refund, body }, publicKey)).toBe(false);
    expect(verifyRequestSignature(jws, { ...refund, path: '/v3/payments/pay_124/refunds' }, publicKey)).toBe(false);
    expect(verifyRequestSignature(jws, { ...refund, method: 'PUT' }, publicKey)).toBe(false);
    const headers = { ...refund.headers, 'Idempotency-Key': '5f0c7e2a-1b3d-4c5e-8f90-a1b2c3d4e5f7' };
    expect(verifyRequestSignature(jws, { ...refund, headers }, publicKey)).toBe(false);
    expect(verifyRequestSignature(jws, { ...refund, headers: {} }, publicKey)).toBe(false);
  });

  it('ignores headers outside tl_headers and matches header names case-insensitively', () => {
    const jws = signRequest(refund, key, { signedHeaders: ['Idempotency-Key'] });
    const headers = { 'idempotency-key': refund.headers['Idempotency-Key'] as string, authorization: 'Bearer other' };
    expect(verifyRequestSignature(jws, { ...refund, headers }, publicKey)).toBe(true);
  });

  it('signs bytes, not text: a body that is not UTF-8 round-trips', () => {
    const request = { ...refund, body: Buffer.from([0xff, 0x00, 0xfe]) };
    expect(verifyRequestSignature(signRequest(request, key), request, publicKey)).toBe(true);
  });

  it('puts jku in the header when asked (webhook signing)', () => {
    const jws = signRequest(refund, key, { jku: 'https://auth.example/.well-known/jwks' });
    expect(decodeJwsHeader(jws)?.jku).toBe('https://auth.example/.well-known/jwks');
  });

  it('is false, never a throw, for a wrong key or malformed input', () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-521' }).publicKey;
    const jws = signRequest(refund, key, { signedHeaders: ['Idempotency-Key'] });
    expect(verifyRequestSignature(jws, refund, other)).toBe(false);
    for (const bad of ['', 'a.b.c', `${jws.split('.')[0]}.x.${jws.split('.')[2]}`, `${jws}x`, 'e30..AA', '!!!..!!!']) {
      expect(verifyRequestSignature(bad, refund, publicKey)).toBe(false);
    }
    const hs256 = `${Buffer.from('{"alg":"HS256","kid":"k","tl_version":"2"}').toString('base64url')}..${jws.split('.')[2]}`;
    expect(verifyRequestSignature(hs256, refund, publicKey)).toBe(false);
  });

  it('refuses to sign when a header it must cover is missing', () => {
    expect(() => signRequest({ ...refund, headers: {} }, key, { signedHeaders: ['Idempotency-Key'] })).toThrow(/missing/);
  });
});

describe('SignatureReuse', () => {
  const keyObject = { keyId: key.keyId, privateKey };
  const list: SignableRequest = { method: 'GET', path: '/v3/payments/pay_123/refunds', headers: {}, body: '' };

  it('reuses a valid signature of the same bodiless request for a while, then signs afresh', () => {
    let now = 1_000;
    const reuse = new SignatureReuse(60_000, () => now);
    const first = reuse.sign(list, keyObject);
    expect(verifyRequestSignature(first, list, publicKey)).toBe(true);
    expect(reuse.sign({ ...list, headers: { authorization: 'Bearer another' } }, keyObject)).toBe(first);
    const other = reuse.sign({ ...list, path: '/v3/payments/pay_456/refunds' }, keyObject);
    expect(other).not.toBe(first);
    expect(verifyRequestSignature(other, { ...list, path: '/v3/payments/pay_456/refunds' }, publicKey)).toBe(true);
    now += 60_001;
    const later = reuse.sign(list, keyObject);
    // ES512 signatures are randomised: a fresh one differs from the kept one.
    expect(later).not.toBe(first);
    expect(verifyRequestSignature(later, list, publicKey)).toBe(true);
  });

  it('signs every request with a body afresh', () => {
    const reuse = new SignatureReuse();
    const a = reuse.sign(refund, keyObject, { signedHeaders: ['Idempotency-Key'] });
    const b = reuse.sign(refund, keyObject, { signedHeaders: ['Idempotency-Key'] });
    expect(a).not.toBe(b);
    expect(verifyRequestSignature(b, refund, publicKey)).toBe(true);
  });
});
