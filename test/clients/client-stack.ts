import { randomUUID } from 'node:crypto';
import type { FixtureUser } from '../../src/sandbox/fixtures/types';
import { advanceSandboxClock, CREATE_PAYOUT, dataOf, fixtures, ibanOf, user, VERIFY, type PayoutView } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

export interface ClientStack {
  stack: Stack;
  /** john's session token, as an app holds it after /auth/login?response=json. */
  session: string;
  john: FixtureUser;
  /** Verifies john's name and pays out to his own account: a payout that moves on when the sandbox clock does. */
  newPayout(): Promise<PayoutView>;
  /** Moves the sandbox clock past the provider's submission of an authorised payout. */
  submitPayouts(): Promise<void>;
}

/**
 * A sandbox and a gateway (APQ allowed) on port 0 for one describe block, with john signed in; closed after the
 * block however its tests end. Sandbox time runs at 1/1000 of real time, so payouts move only when a test says.
 */
export function useClientStack(): () => ClientStack {
  let current: ClientStack | undefined;
  beforeAll(async () => {
    const stack = await startStack({ env: { PERSISTED_DOCUMENTS: 'allow', SANDBOX_TIME_SCALE: '0.001' } });
    try {
      const session = await stack.signIn('john', 'doe');
      const john = user(await fixtures(stack), 'john');
      dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
      current = {
        stack,
        session,
        john,
        async newPayout() {
          const input = {
            transactionId: randomUUID(),
            beneficiaryName: 'John Doe',
            beneficiaryIban: ibanOf(john),
            beneficiaryReference: 'Client recipe',
            amountInMinor: 1_500,
            currency: 'GBP',
          };
          return dataOf(await stack.graphql<{ createPayout: PayoutView }>(CREATE_PAYOUT, { input }, session)).createPayout;
        },
        submitPayouts: () => advanceSandboxClock(stack, 5),
      };
    } catch (error) {
      await stack.close();
      throw error;
    }
  });
  afterAll(async () => {
    await current?.stack.close();
  });
  return () => {
    if (!current) throw new Error('the client stack is not running: use it inside a test or hook');
    return current;
  };
}
