import type { AppIdentityConfig } from '../platform/config/config';

type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });

/** Accepted clock difference between the IdP and this gateway, for exp and nbf. */
const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * Access-token media types (RFC 9068's `at+jwt`, and the plain `JWT` most IdPs write); a token without `typ` is
 * taken too, since many IdPs omit it. Any other type (a logout token, a DPoP proof, an IdP's own `id+jwt`) is a JWT
 * made for something else.
 */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'at+jwt', 'application/at+jwt', 'application/jwt']);

export type AppTokenResult = { ok: true; issuer: string; subject: string; expiresAtMs: number } | { ok: false; reason: string };

/**
 * The app's own OIDC access tokens (app identity): signature against the IdP's JWKS, issuer, audience, exp/nbf,
 * issued (`iat`) within AUTH_MAX_TOKEN_AGE, so a token minted with a far `exp` is not good for years, an access
 * token's `typ`, and only the configured algorithms (which never include `none` or an HMAC). The user is (iss, sub).
 * jose is ESM-only, so it is loaded with import() once, on first use.
 */
export class AppTokenVerifier {
  private jose?: Promise<{ jose: Jose; keys: ReturnType<Jose['createRemoteJWKSet']> }>;

  constructor(private readonly config: AppIdentityConfig) {}

  /** `audience`: the one the token must name, when not AUTH_AUDIENCE (MCP_AUDIENCE for /mcp). */
  async verify(token: string, audience = this.config.audience): Promise<AppTokenResult> {
    const { jose, keys } = await (this.jose ??= import('jose').then((jose) => ({ jose, keys: jose.createRemoteJWKSet(new URL(this.config.jwksUrl)) })));
    try {
      const { payload, protectedHeader } = await jose.jwtVerify(token, keys, {
        issuer: this.config.issuer,
        audience,
        algorithms: this.config.algorithms,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        maxTokenAge: this.config.maxTokenAgeSeconds,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (protectedHeader.typ !== undefined && !ACCESS_TOKEN_TYPES.has(protectedHeader.typ.toLowerCase())) {
        return { ok: false, reason: 'The token is not an access token (its "typ" header is not JWT or at+jwt).' };
      }
      if (typeof payload.sub !== 'string' || payload.sub === '') return { ok: false, reason: 'The access token has no subject (sub).' };
      // exp is a required claim, so jose has checked it is a number.
      return { ok: true, issuer: this.config.issuer, subject: payload.sub, expiresAtMs: payload.exp! * 1000 };
    } catch (error) {
      return { ok: false, reason: reasonFor(jose, error) };
    }
  }
}

/** A claim jose refused: missing, not of its type, or not the value this gateway accepts (which it does not name). */
function claimProblem(claim: string, reason: string): string {
  if (reason === 'missing') return `The access token has no "${claim}" claim; it is required.`;
  if (reason === 'invalid') return `The access token's "${claim}" claim is malformed (${claim === 'sub' ? 'a string' : 'a number of seconds'} is expected).`;
  if (claim === 'nbf') return 'The access token is not valid yet ("nbf" is in the future); check the clocks of the identity provider and this gateway.';
  if (claim === 'iss') return 'The access token was issued by another identity provider ("iss" is not the one this gateway trusts).';
  if (claim === 'aud') return 'The access token is meant for another API ("aud" does not name this gateway\'s audience).';
  return `The access token's "${claim}" claim has a value this gateway does not accept.`;
}

/** Says what was wrong with the token, never what the gateway expected in full (issuer and audience stay private). */
function reasonFor(jose: Jose, error: unknown): string {
  const { errors } = jose;
  if (error instanceof errors.JWTExpired) {
    return error.claim === 'iat'
      ? 'The access token was issued too long ago (AUTH_MAX_TOKEN_AGE); get a new one from your identity provider.'
      : 'The access token has expired; get a new one from your identity provider.';
  }
  if (error instanceof errors.JWTClaimValidationFailed) return claimProblem(error.claim, error.reason);
  if (error instanceof errors.JOSEAlgNotAllowed) return 'The access token is signed with an algorithm this gateway does not accept.';
  if (error instanceof errors.JWKSNoMatchingKey) return 'The access token is signed with a key the identity provider does not publish.';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return "The identity provider's keys could not be read; try again shortly.";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "The access token's signature does not verify.";
  return 'The access token is not a valid signed JWT.';
}
