import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/observability/logger';
import {
  CREATE_PAYOUT,
  dataOf,
  fixtures,
  ibanOf,
  injectFault,
  onlyError,
  PAYOUT_UPDATED,
  providerRequests,
  QUIET_RECONCILER,
  READ_PAYOUT,
  user,
  VERIFY,
  VIEWER_MONEY,
  type PayoutView,
} from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

type CreateResult = { createPayout: PayoutView };
type ReadResult = { payout: PayoutView | null };
type ViewerMoney = { viewer: { payouts: PayoutView[] } };

/*
 * A payout whose send has an uncertain outcome (the provider processed the POST but answered a body the gateway
 * cannot read) and whose read-back contradicts the request: the provider may have paid, so the gateway keeps it as
 * `conflict`, counted in every cap and in the approval total, and tells the client not to pay again under a new id.
 */
describe('a payout whose read-back contradicts the request', () => {
  let stack: Stack;
  const lines: string[] = [];
  /** How far the gateway's payout clock runs ahead of the wall clock. */
  let clockOffsetMs = 0;

  beforeEach(async () => {
    lines.length = 0;
    clockOffsetMs = 0;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    // The default approval threshold (50,000); a user's daily cap low enough that the conflict visibly uses it up.
    stack = await startStack({
      env: { ...QUIET_RECONCILER, PAYOUT_DAILY_MAX_MINOR: '70000' },
      gateway: { logger: createLogger('info', sink), clock: () => Date.now() + clockOffsetMs },
    });
  });

  afterEach(async () => {
    await disposeWsClients();
    await stack?.close();
  });

  /** A read-back of `transactionId` as the provider's withdrawal to john's IBAN, of `amountInMinor`. */
  function contradictingReadBack(transactionId: string, iban: string, amountInMinor: number): Record<string, unknown> {
    return {
      match: `GET /v1/withdrawals/${transactionId}`,
      times: 5,
      body: {
        result: {
          transaction_id: transactionId,
          status: 'authorised',
          beneficiary_name: 'John Doe',
          beneficiary_iban: iban,
          beneficiary_reference: 'Rent',
          currency: 'GBP',
          amount_in_minor: amountInMinor,
          context_code: 'withdrawal',
          authorised_at: new Date().toISOString(),
          submitted_at: null,
          settled_at: null,
          rejected_at: null,
          failed_at: null,
        },
      },
    };
  }

  const withdrawalPosts = async (): Promise<number> =>
    (await providerRequests(stack)).filter((request) => request.method === 'POST' && request.path === '/v1/withdrawals').length;

  it('keeps it as conflict, counts it in the approval total and the daily cap, lists it, and says not to pay again under a new id', async () => {
    const seeded = await fixtures(stack);
    const iban = ibanOf(user(seeded, 'john'));
    const session = await stack.signIn('john', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
    const first = {
      transactionId: randomUUID(),
      beneficiaryName: 'John Doe',
      beneficiaryIban: iban,
      beneficiaryReference: 'Rent',
      amountInMinor: 30_000,
      currency: 'GBP',
    };

    // The POST is processed, but its answer is not JSON; the read-back then shows another amount under the same id.
    await injectFault(stack, { match: 'POST /v1/withdrawals', malformed: true, afterProcessing: true, times: 1 });
    await injectFault(stack, contradictingReadBack(first.transactionId, iban, 35_000));
    const postsBefore = await withdrawalPosts();
    const refused = onlyError(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: first }, session));
    expect(refused.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', reason: 'PAYOUT_CONFLICT' });
    expect(refused.message).toContain(first.transactionId);
    expect(refused.message).toMatch(/conflict/);
    expect(refused.message).toMatch(/do not pay it again under a new transactionId/i);
    expect(refused.message).not.toContain('35000');

    // Kept, shown as conflict wherever the user looks, with the request the client made.
    const read = dataOf(await stack.graphql<ReadResult>(READ_PAYOUT, { id: first.transactionId }, session)).payout;
    expect(read).toMatchObject({ transactionId: first.transactionId, status: 'conflict', amountInMinor: 30_000 });
    const listed = dataOf(await stack.graphql<ViewerMoney>(VIEWER_MONEY, {}, session)).viewer.payouts;
    expect(listed.map((payout) => [payout.transactionId, payout.status, payout.amountInMinor])).toEqual([[first.transactionId, 'conflict', 30_000]]);

    // A subscription sees it as conflict, a final status: the stream completes, and no watcher reads the provider.
    const live = connectWs(stack.gateway.url, session).subscribe<{ payoutUpdated: { status: string } }>(PAYOUT_UPDATED, { id: first.transactionId });
    expect((await live.next()).data?.payoutUpdated.status).toBe('conflict');
    expect(await live.ended).toMatchObject({ completed: true });

    // The same request again answers the same, and sends nothing.
    const repeated = onlyError(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: first }, session));
    expect(repeated.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', reason: 'PAYOUT_CONFLICT' });
    expect((await withdrawalPosts()) - postsBefore).toBe(1);

    // A second payout that together with the first passes the approval threshold waits for approval.
    const second = { ...first, transactionId: randomUUID(), beneficiaryReference: 'Rent again' };
    const waiting = dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: second }, session)).createPayout;
    expect(waiting).toMatchObject({ transactionId: second.transactionId, status: 'awaiting-approval' });
    expect((await withdrawalPosts()) - postsBefore).toBe(1);

    // The daily cap counts it too: 30,000 + 30,000 of 70,000 leave 10,000.
    const third = { ...first, transactionId: randomUUID(), beneficiaryReference: 'Rent thrice', amountInMinor: 20_000 };
    const capped = onlyError(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: third }, session));
    expect(capped.extensions).toMatchObject({ code: 'PAYOUT_LIMIT_EXCEEDED', limit: 'user-daily', remainingInMinor: 10_000 });

    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/^bankgraph_payout_conflicts_total 1$/m);
    const logged = lines.filter((line) => line.includes('payout conflict'));
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0]!)).toMatchObject({ transactionId: first.transactionId, differing: ['amountInMinor'] });
    expect(logged[0]).not.toContain(iban);
    expect(logged[0]).not.toContain('John Doe');
  });

  it('keeps as conflict a payout whose lost answer the reconciler reads back with another amount, and never expires or resends it', async () => {
    const seeded = await fixtures(stack);
    const iban = ibanOf(user(seeded, 'john'));
    const session = await stack.signIn('john', 'doe');
    dataOf(await stack.graphql(VERIFY, { name: 'John Doe' }, session));
    const input = {
      transactionId: randomUUID(),
      beneficiaryName: 'John Doe',
      beneficiaryIban: iban,
      beneficiaryReference: 'Rent',
      amountInMinor: 40_000,
      currency: 'GBP',
    };
    await injectFault(stack, { match: 'POST /v1/withdrawals', reset: true, afterProcessing: true, times: 3 });
    expect(onlyError(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session)).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect((await stack.gateway.features.payouts.ledger.get(input.transactionId))?.status).toBe('pending-submission');
    const postsBefore = await withdrawalPosts();

    await injectFault(stack, contradictingReadBack(input.transactionId, iban, 4_000));
    await stack.gateway.scheduler.runOnce();
    expect((await stack.gateway.features.payouts.ledger.get(input.transactionId))?.status).toBe('conflict');

    const repeated = onlyError(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input }, session));
    expect(repeated.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', reason: 'PAYOUT_CONFLICT' });
    const listed = dataOf(await stack.graphql<ViewerMoney>(VIEWER_MONEY, {}, session)).viewer.payouts;
    expect(listed.map((payout) => [payout.status, payout.amountInMinor])).toEqual([['conflict', 40_000]]);
    // 40,000 kept as conflict and 20,000 more pass the approval threshold together.
    const next = { ...input, transactionId: randomUUID(), beneficiaryReference: 'Next', amountInMinor: 20_000 };
    expect(dataOf(await stack.graphql<CreateResult>(CREATE_PAYOUT, { input: next }, session)).createPayout.status).toBe('awaiting-approval');
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/^bankgraph_payout_conflicts_total 1$/m);

    // Past PAYOUT_SUBMISSION_EXPIRY_MS (24 h) the reconciler neither expires nor resends it.
    clockOffsetMs = 25 * 60 * 60 * 1000;
    await stack.gateway.scheduler.runOnce();
    expect((await stack.gateway.features.payouts.ledger.get(input.transactionId))?.status).toBe('conflict');
    expect(await withdrawalPosts()).toBe(postsBefore);
  });
});
