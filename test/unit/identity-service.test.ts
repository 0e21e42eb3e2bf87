import { NotFoundError } from '../../src/platform/errors/gateway-errors';
import { IdentityEvents, IdentityService, type ConnectionStore, type IdentityEvent, type SessionStore } from '../../src/identity';
import { sessionKey } from '../../src/identity/session.store';

/** Records, in order, what the service wrote, deleted and announced. */
function fixture(found: { user?: boolean; connection?: boolean; session?: boolean }) {
  const steps: string[] = [];
  const connection = { id: 'conn_1', userId: 'user_1', providerId: 'ob-north', status: 'revoked' as const, createdAtMs: 1 };
  const connections = {
    revokeUser: async (userId: string) => (steps.push(`store: revoke ${userId}`), found.user ?? false),
    reinstateUser: async (userId: string) => (steps.push(`store: reinstate ${userId}`), found.user ?? false),
    revoke: async (_userId: string, connectionId: string) => (steps.push(`store: revoke ${connectionId}`), found.connection ? connection : undefined),
  } as unknown as ConnectionStore;
  const sessions = {
    delete: async () => (steps.push('store: end session'), found.session ? { userId: 'user_1', expiresAtMs: 0 } : undefined),
  } as unknown as SessionStore;
  const bus = {
    publish: async (_topic: string, payload: unknown) => void steps.push(`announce: ${(payload as IdentityEvent).kind}`),
    listen: async () => async () => undefined,
  };
  const held = {
    forgetUser: async (userId: string) => steps.push(`forget: ${userId}`),
    forgetConnection: async (connectionId: string) => steps.push(`forget: ${connectionId}`),
  };
  const events = new IdentityEvents({ bus, topic: 'identity' });
  const service = new IdentityService({ connections, sessions, events, held });
  return { service, steps, connection, events };
}

describe('IdentityService', () => {
  it('revokes a user in the store, deletes what others hold for them, then announces it', async () => {
    const { service, steps } = fixture({ user: true });
    await service.revokeUser('user_1');
    expect(steps).toEqual(['store: revoke user_1', 'forget: user_1', 'announce: user-revoked']);
  });

  it('announces nothing for a user or a connection that does not exist', async () => {
    const { service, steps } = fixture({});
    await expect(service.revokeUser('user_x')).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.reinstateUser('user_x')).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.disconnectBank('user_1', 'conn_x')).rejects.toBeInstanceOf(NotFoundError);
    expect(steps).toEqual(['store: revoke user_x', 'store: reinstate user_x', 'store: revoke conn_x']);
  });

  it('disconnects a bank in the store, deletes what others hold for it, then announces it', async () => {
    const { service, steps, connection } = fixture({ connection: true });
    expect(await service.disconnectBank('user_1', 'conn_1')).toBe(connection);
    expect(steps).toEqual(['store: revoke conn_1', 'forget: conn_1', 'announce: disconnected']);
  });

  it('announces a logout only when the session was live, under its key', async () => {
    const announced: IdentityEvent[] = [];
    const live = fixture({ session: true });
    const stop = await live.events.listen((event) => announced.push(event));
    await live.service.logout('bgs_token');
    await stop();
    expect(live.steps).toEqual(['store: end session', 'announce: logout']);
    expect(announced).toEqual([{ kind: 'logout', userId: 'user_1', sessionKey: sessionKey('bgs_token') }]);

    const ended = fixture({});
    await ended.service.logout('bgs_token');
    expect(ended.steps).toEqual(['store: end session']);
  });
});
