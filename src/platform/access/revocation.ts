/**
 * A credential that stopped holding, as the transports act on it (the identity module announces these):
 * - `logout`: one session ended; its sockets close;
 * - `disconnected`: one bank connection was revoked; the user's sockets close (their subscriptions were authorised
 *   with it);
 * - `user-revoked`: the user is gone; all their sessions and sockets end.
 */
export type Revocation =
  | { kind: 'logout'; userId: string; sessionKey: string }
  | { kind: 'disconnected'; userId: string; connectionId: string }
  | { kind: 'user-revoked'; userId: string };

/** Any announcement about a user's access, as RecentRevocations hears it: a kind it does not know (a bank connected) revokes nothing. */
export interface PrincipalEvent {
  kind: string;
  userId: string;
  sessionKey?: string;
  connectionId?: string;
}

/**
 * Which of the open sockets' principals still hold, read from the store (the identity module answers it): the
 * sessions still live, and the users signed in without a session (app identity) that are revoked or gone.
 */
export type PrincipalCheck = (owners: { sessionKeys: string[]; userIds: string[] }) => Promise<{ liveSessions: Set<string>; revokedUsers: Set<string> }>;
