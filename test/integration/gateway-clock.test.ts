import { startStack, type Stack } from '../helpers/stack';

const ACCOUNTS = '{ viewer { accounts { id: accountId } } }';
const HOUR_MS = 3600 * 1000;

/**
 * The gateway has one clock (GatewayOptions.clock), and everything that reads the time reads it: here the session
 * store, which before had a clock of its own, next to the payout, refund and rate-limit clocks tests stepped.
 */
describe("the gateway's one clock", () => {
  let stack: Stack;
  let offsetMs = 0;

  beforeAll(async () => {
    stack = await startStack({ env: { SESSION_IDLE_TIMEOUT: '1h' }, gateway: { clock: () => Date.now() + offsetMs } });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('idles a session out once the gateway clock passes SESSION_IDLE_TIMEOUT', async () => {
    const session = await stack.signIn();
    expect((await stack.graphql(ACCOUNTS, {}, session)).errors).toBeUndefined();
    offsetMs += 2 * HOUR_MS;
    expect((await stack.graphql(ACCOUNTS, {}, session)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
