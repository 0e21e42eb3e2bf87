import { HOLDER_DIGEST_PREFIX } from './holder-name-digest';

/** One login's latest view at a bank, as a connection recorded it: whose it is, the name given, what it showed. */
export interface KnownLogin {
  connectionId: string;
  userId: string;
  userRevoked: boolean;
  /**
   * The fingerprint of the holder's normalised full name (holder-name-digest.ts): this rule's when it starts with
   * HOLDER_DIGEST_PREFIX, else the earlier rule's; null when the bank gave none.
   */
  holderDigest: string | null;
  /** Every account id and card id the connection showed (at sign-in and since). */
  accounts: ReadonlySet<string>;
  cards: ReadonlySet<string>;
  createdAtMs: number;
}

/** What a new grant at the same bank shows. */
export interface GrantFacts {
  accounts: ReadonlySet<string>;
  cards: ReadonlySet<string>;
  holderDigest: string | undefined;
  /** The same name by the earlier rule, compared only with connections recorded before this rule. */
  earlierHolderDigest?: string | undefined;
}

/**
 * The logins this grant is recognised as (docs/identity.md, "Who a grant belongs to"), best first. A grant is a
 * known login's again only when both hold:
 * - it shows every account that login showed: the same ones (the same login signing in again) or more (an account
 *   opened since). Sharing some is not enough: two people with a joint account share it, and neither's own
 *   accounts are in the other's grant. Cards are compared only for a login that showed no account (a card-only
 *   customer): cards are reissued far more often than accounts close, and each holder of a joint account has
 *   cards of their own anyway;
 * - the bank gave the same holder name for both, spelt the same but for case, diacritics, punctuation, spacing and
 *   leading courtesy titles (holder-name-digest.ts). This keeps apart two people whose accounts contain one another's
 *   (one holds only the joint account, the other the joint account and more), father and son ("Jr", "Sr") and
 *   names in another order among them. Without a name on either side nothing is recognised: the grant becomes a
 *   new user, never someone else's. A connection recorded under the earlier rule's digest, which joined such
 *   names, is matched by it only when its user is revoked: that keeps the login refused, and never joins anyone.
 * Best first: the login that showed the most (the closest to this grant), then the latest.
 */
export function recognisedLogins(grant: GrantFacts, known: readonly KnownLogin[]): KnownLogin[] {
  if (grant.holderDigest === undefined) return [];
  return known
    .filter((login) => sameHolder(grant, login) && showsAllOf(grant, login))
    .sort((a, b) => shown(b).size - shown(a).size || b.createdAtMs - a.createdAtMs || a.connectionId.localeCompare(b.connectionId));
}

function sameHolder(grant: GrantFacts, login: KnownLogin): boolean {
  if (login.holderDigest === null) return false;
  if (login.holderDigest.startsWith(HOLDER_DIGEST_PREFIX)) return login.holderDigest === grant.holderDigest;
  return login.userRevoked && grant.earlierHolderDigest !== undefined && login.holderDigest === grant.earlierHolderDigest;
}

/** What recognises a login: its accounts, or its cards when it showed no account. */
function shown(login: KnownLogin): ReadonlySet<string> {
  return login.accounts.size > 0 ? login.accounts : login.cards;
}

function showsAllOf(grant: GrantFacts, login: KnownLogin): boolean {
  const ids = shown(login);
  const granted = login.accounts.size > 0 ? grant.accounts : grant.cards;
  return ids.size > 0 && [...ids].every((id) => granted.has(id));
}
