import { randomUUID } from 'node:crypto';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import { advanceSandboxClock, dataOf, DECLINE_PAYOUT, fixtures, ibanOf, user, VERIFY } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

/* Payout.state, the PayoutStatus enum beside the lower-case Payout.status, on answers, reads and pushes. */

const FIELDS = 'transactionId status state';
const CREATE = `mutation CreatePayout($input: CreatePayoutInput!) { createPayout(input: $input) { ${FIELDS} } }`;
const READ = `query ReadPayout($id: ID!) { payout(transactionId: $id) { ${FIELDS} } }`;
const UPDATED = `subscription Payout($id: ID!) { payoutUpdated(transactionId: $id) { ${FIELDS} } }`;
const DECLINE = DECLINE_PAYOUT.replace('status', FIELDS);

type PayoutState = { transactionId: string; status: string; state: string };

describe('Payout.state', () => {
  let stack: Stack;
  let seeded: Fixtures;

  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001', PAYOUT_APPROVAL_ABOVE_MINOR: '50000' } });
    seeded = await fixtures(stack);
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function johnsPayout(session: string, amountInMinor: number): Promise<PayoutState> {
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
    const input = {
      transactionId: randomUUID(),
      beneficiaryName: 'John Doe',
      beneficiaryIban: ibanOf(user(seeded, 'john')),
      beneficiaryReference: 'State test',
      amountInMinor,
      currency: 'GBP',
    };
    return dataOf(await stack.graphql<{ createPayout: PayoutState }>(CREATE, { input }, session)).createPayout;
  }

  it('is the upper-case enum of status on the answer, on reads and on every payoutUpdated push until SETTLED', async () => {
    const session = await stack.signIn('john', 'doe');
    const payout = await johnsPayout(session, 1_234);
    expect(payout).toMatchObject({ status: 'authorised', state: 'AUTHORISED' });

    const live = connectWs(stack.gateway.url, session).subscribe<{ payoutUpdated: PayoutState }>(UPDATED, { id: payout.transactionId });
    expect((await live.next()).data!.payoutUpdated).toMatchObject({ status: 'authorised', state: 'AUTHORISED' });
    await waitFor(() => stack.gateway.features.payouts.watchers.isPolling(payout.transactionId) || undefined, 'the payout watcher to start');
    await advanceSandboxClock(stack, 5);
    expect((await live.next()).data!.payoutUpdated).toMatchObject({ status: 'submitted', state: 'SUBMITTED' });
    await advanceSandboxClock(stack, 30);
    expect((await live.next()).data!.payoutUpdated).toMatchObject({ status: 'settled', state: 'SETTLED' });

    const read = dataOf(await stack.graphql<{ payout: PayoutState }>(READ, { id: payout.transactionId }, session)).payout;
    expect(read).toMatchObject({ status: 'settled', state: 'SETTLED' });
  });

  it("names the gateway's own statuses too: AWAITING_APPROVAL, then DECLINED", async () => {
    const session = await stack.signIn('john', 'doe');
    const payout = await johnsPayout(session, 60_000);
    expect(payout).toMatchObject({ status: 'awaiting-approval', state: 'AWAITING_APPROVAL' });
    const declined = dataOf(
      await stack.graphql<{ declinePayout: PayoutState }>(DECLINE, { id: payout.transactionId, reason: 'Not expected' }, stack.merchantKey),
    ).declinePayout;
    expect(declined).toMatchObject({ status: 'declined', state: 'DECLINED' });
  });
});
