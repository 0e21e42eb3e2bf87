import { createHash, randomUUID } from 'node:crypto';
import type { MoneyConfig } from '../platform/config/config';
import type { CallOptions } from '../platform/provider/http.client';
import type { Logger } from '../platform/observability/logger';
import {
  BadUserInputError,
  BeneficiaryNotVerifiedError,
  GatewayError,
  IdempotencyConflictError,
  NotFoundError,
  TryAgainError,
  UpstreamError,
} from '../platform/errors/gateway-errors';
import { sameHolderName } from '../beneficiaries';
import type { PayoutStore, PayoutRecord } from './payout.store';
import {
  initiatorOf,
  ownerKey,
  PAYOUT_REQUEST_FIELDS,
  sameOwner,
  type ConfirmedPayout,
  type PayoutAgent,
  type PayoutOwner,
  type PayoutRequest,
  type PayoutView,
} from './payout.model';
import { payoutProvider, type PayoutProvider, type WithdrawalCalls } from './payout-provider.adapter';
import type { VerifiedBeneficiaries } from './payout-approval';
import { approveAwaiting, recordPayout } from './payout-transactions';
import type { ClaimReleaseWatch, ClaimSignals } from './payout-claim-signals';
import { AWAITING_APPROVAL, CONFLICT, DECLINED, EXPIRED, PENDING_SUBMISSION, payoutLifecycle } from './payout-status';

/** Where payout changes go (payoutUpdated); bound to the event bus by payout.stream.ts. */
export interface PayoutPublisher {
  publish(transactionId: string, payout: PayoutView): Promise<void>;
}

/** The provider reads of one operation: a query may ask for one payout twice, and the provider is asked once. */
export type PayoutReads = Map<string, Promise<ConfirmedPayout | undefined>>;

const operationReads = new WeakMap<object, PayoutReads>();

/** The reads of the operation `operation` stands for (its context), made on first use and gone with it. */
export function payoutReadsOf(operation: object): PayoutReads {
  let reads = operationReads.get(operation);
  if (!reads) operationReads.set(operation, (reads = new Map()));
  return reads;
}

/** What the payouts report to /metrics. */
export interface PayoutMetrics {
  /** A payout kept as conflict (bankgraph_payout_conflicts_total). */
  payoutConflict(): void;
}

export interface PayoutServiceDeps {
  /** The provider client's withdrawal calls; the service reaches them through payout-provider.adapter.ts. */
  provider: WithdrawalCalls;
  ledger: PayoutStore;
  beneficiaries: VerifiedBeneficiaries;
  events: PayoutPublisher;
  /** Wakes a request waiting on another's submission when that claim is let go; without it, it waits out the lease. */
  claims?: ClaimSignals;
  /** The ledger's clock: windows, claims and expiries are measured on it. */
  clock: () => number;
  logger: Logger;
  settings: MoneyConfig;
  metrics?: PayoutMetrics;
}

/**
 * How long an identical createPayout without transactionId answers the first payout instead of paying again
 * (docs/money.md). Long enough for any client's timeout-and-retry; a deliberate second identical payout within it
 * is made with an explicit new transactionId.
 */
export const IDENTICAL_PAYOUT_WINDOW_MS = 15 * 60 * 1000;

/**
 * How long a submission claim holds without renewal: the sending instance renews it every CLAIM_RENEW_MS while its
 * provider call runs, so the claim of an instance that is gone lapses this soon after, well inside a retry's
 * operation deadline.
 */
export const SUBMISSION_CLAIM_MS = 5_000;
const CLAIM_RENEW_MS = 1_000;
/** A caller waits for another's claim only while this much of its operation's deadline is left, enough to send itself. */
const MIN_SEND_MS = 1_000;

/** `extensions.reason` of the UPSTREAM_ERROR that answers a payout kept as conflict. */
export const PAYOUT_CONFLICT_REASON = 'PAYOUT_CONFLICT';

const CONFLICT_MESSAGE = 'This transactionId is already used by another payout. Use a new UUID (or omit transactionId) for a new payout.';

/** What createPayout may be told beside the request: who to tell of a repeat, and the agent asking, if one is. */
export interface CreateExtras {
  onRepeat?: () => void;
  agent?: PayoutAgent;
}

/** Passes an answer on after telling `onRepeat` that it is a repeat. */
function repeated(onRepeat: () => void): (payout: PayoutView) => PayoutView {
  return (payout) => {
    onRepeat();
    return payout;
  };
}

/**
 * A recorded payout as it stands: the provider's as last seen or, while the provider has not confirmed it (pending,
 * awaiting approval, declined, expired), the request as recorded with the gateway's status and no stage reached.
 * payoutUpdated events carry this shape.
 */
export function recordView(record: PayoutRecord): PayoutView {
  const initiator = initiatorOf(record.owner, record.agentClient);
  if (record.confirmed) return { ...record.confirmed, ...initiator };
  return {
    ...record.request,
    status: record.status,
    authorisedAt: null,
    submittedAt: null,
    settledAt: null,
    rejectedAt: null,
    failedAt: null,
    ...initiator,
  };
}

/** The provider's current payout for a recorded one, with who initiated it. */
function liveView(record: PayoutRecord, live: ConfirmedPayout): PayoutView {
  return { ...live, ...initiatorOf(record.owner, record.agentClient) };
}

/** A payout the gateway never recorded (made at the provider directly): who initiated it is not known. */
function unrecordedView(live: ConfirmedPayout): PayoutView {
  return { ...live, initiatedBy: null, agentName: null };
}

/**
 * Payouts: creation under the payout policy and idempotency, approval and decline, reads with the provider's live
 * status, and the repairs the scheduler's payout jobs run. Every status change is stored in the ledger before it is
 * published. Answers are payouts as the provider shows them (or a recorded payout's recordView).
 */
export class PayoutService {
  private readonly provider: PayoutProvider;

  constructor(private readonly deps: PayoutServiceDeps) {
    this.provider = payoutProvider(deps.provider);
  }

  /**
   * createPayout after validation. `explicitId` says whether the client chose the transaction id; without one, an
   * identical request inside IDENTICAL_PAYOUT_WINDOW_MS answers the first payout.
   *
   * Order matters for money: the verification and the policy refuse before any provider call; the record (with the
   * exact request) is committed before the provider call, so a crash or a failed call in between leaves something a
   * retry or the reconciler completes with the same bytes, which the provider deduplicates. `onRepeat` is called
   * when the answer is a payout recorded before under the same transactionId or fingerprint; an `agent`'s payout
   * always awaits approval.
   */
  async create(
    owner: PayoutOwner,
    request: PayoutRequest,
    explicitId: boolean,
    options: CallOptions,
    { onRepeat = () => {}, agent }: CreateExtras = {},
  ): Promise<PayoutView> {
    const { ledger, settings, logger } = this.deps;
    const known = await ledger.get(request.transactionId);
    if (known) return this.answerRepeat(owner, known, request, options).then(repeated(onRepeat));
    await this.assertBeneficiaryVerified(owner, request);
    // An agent's request never matches a person's identical one: the person's may have been sent without approval.
    const fingerprint = explicitId ? undefined : { value: fingerprintOf(owner, request, agent), windowMs: IDENTICAL_PAYOUT_WINDOW_MS };
    const { record, created } = await recordPayout(
      ledger,
      settings,
      { owner, request, ...(fingerprint ? { fingerprint } : {}), ...(agent ? { agentClient: agent.clientName } : {}) },
      { alwaysApprove: agent !== undefined },
    );
    if (!created) {
      // The same id raced in on another instance, or an identical request within the window: that payout.
      return this.answerRepeat(owner, record, { ...request, transactionId: record.transactionId }, options).then(repeated(onRepeat));
    }
    if (record.status === AWAITING_APPROVAL) {
      const by = agent ? { initiatedBy: 'agent', agentClient: agent.clientName } : {};
      logger.info({ transactionId: record.transactionId, amountInMinor: request.amountInMinor, ...by }, 'payout awaits approval');
      return recordView(record);
    }
    return this.submit(record, options);
  }

  /**
   * approvePayout (merchant keys): an awaiting-approval payout becomes pending and is sent, if it still may be
   * (payout-approval.ts: its owner not revoked, its beneficiary still verified, every limit still holding); one
   * past PAYOUT_APPROVAL_EXPIRY_MS expires instead. A refusal sends nothing.
   */
  async approve(transactionId: string, options: CallOptions): Promise<PayoutView> {
    const { ledger, settings, beneficiaries, logger } = this.deps;
    const outcome = await approveAwaiting(ledger, settings, beneficiaries, transactionId, settings.payoutApprovalExpiryMs);
    if (outcome.kind === 'expired') {
      logger.info({ transactionId }, 'payout expired awaiting approval');
      await this.publish(outcome.record);
    }
    if (outcome.kind !== 'approved') throw await this.notAwaiting(transactionId);
    const approved = outcome.record;
    logger.info({ transactionId }, 'payout approved');
    await this.publish(approved);
    const payout = await this.submit(approved, options);
    // Its subscribers were watching before it was sent: they see the provider's answer too.
    const sent = await ledger.get(transactionId);
    if (sent) await this.publish(sent);
    return payout;
  }

  /** declinePayout (merchant keys): an awaiting-approval payout ends as declined, never sent. */
  async decline(transactionId: string, reason: string): Promise<PayoutView> {
    const declined = await this.deps.ledger.transition(transactionId, AWAITING_APPROVAL, DECLINED, { declineReason: reason });
    if (!declined) throw await this.notAwaiting(transactionId);
    this.deps.logger.info({ transactionId }, 'payout declined');
    await this.publish(declined);
    return recordView(declined);
  }

  /** The recorded payout, whoever owns it (undefined when the gateway recorded none). */
  recorded(transactionId: string): Promise<PayoutRecord | undefined> {
    return this.deps.ledger.get(transactionId);
  }

  /**
   * Query.payout: a session sees only its own payouts (another's id reads as undefined, exactly like an unknown id,
   * so ids cannot be probed); a merchant key sees every payout, including ones created at the provider without the
   * gateway. `reads` are the provider reads of the operation asking.
   */
  async read(owner: PayoutOwner, transactionId: string, options: CallOptions, reads: PayoutReads = new Map()): Promise<PayoutView | undefined> {
    const record = await this.deps.ledger.get(transactionId);
    if (owner.kind === 'user' && (!record || !sameOwner(record.owner, owner))) return undefined;
    if (record) return this.livePayout(record, options, reads);
    const live = await this.liveRead(transactionId, options, reads);
    return live && unrecordedView(live);
  }

  /**
   * node(id:) for payouts: the payouts this gateway recorded, found in one ledger read and then read as Query.payout
   * reads them. An id the ledger does not know answers undefined with no provider call: the provider has no batch
   * read, so a list of unknown ids would be a GET each (Query.payout still reads a payout made without the gateway).
   */
  async readRecorded(
    owner: PayoutOwner,
    transactionIds: readonly string[],
    options: CallOptions,
    reads: PayoutReads = new Map(),
  ): Promise<(PayoutView | Error | undefined)[]> {
    const records = new Map((await this.deps.ledger.getMany(transactionIds)).map((record) => [record.transactionId, record]));
    return Promise.all(
      transactionIds.map(async (transactionId) => {
        const record = records.get(transactionId);
        if (!record || (owner.kind === 'user' && !sameOwner(record.owner, owner))) return undefined;
        return this.livePayout(record, options, reads).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
      }),
    );
  }

  /** Viewer.payouts: newest first, each with live status; the provider reads run in parallel. */
  async listForUser(userId: string, options: CallOptions, reads: PayoutReads = new Map()): Promise<PayoutView[]> {
    const records = await this.deps.ledger.listForOwner({ kind: 'user', userId });
    return Promise.all(
      records.map(async (record) => {
        try {
          return await this.livePayout(record, options, reads);
        } catch (error) {
          // One unreadable payout should not hide the others: show its last known state, and log why.
          this.deps.logger.warn({ err: error, transactionId: record.transactionId }, 'live payout status unavailable; showing the stored state');
          return recordView(record);
        }
      }),
    );
  }

  /**
   * The payout watcher's read: the provider's payout, stored in the ledger first when it is a recorded payout
   * and moved, so that what the watcher then publishes is what the ledger holds.
   */
  async refresh(transactionId: string, options: CallOptions): Promise<PayoutView> {
    const record = await this.deps.ledger.get(transactionId);
    const live = await this.provider.read(transactionId, options);
    if (!record) {
      if (live) return unrecordedView(live);
      throw new UpstreamError('The provider answered a payout read with a body the gateway cannot read. Read the payout again shortly.');
    }
    // A recorded payout is published as the ledger holds it: a contradicting read is never shown as it.
    if (!live || !(await this.storeLive(record, live))) return recordView((await this.deps.ledger.get(transactionId)) ?? record);
    return liveView(record, live);
  }

  /**
   * A pending payout past its submission window (or found by the reconciler): what the provider has is stored; past
   * the window with nothing there, it is marked expired so that it can never be sent.
   */
  async reconcilePending(record: PayoutRecord, options: CallOptions): Promise<PayoutRecord> {
    const { ledger, settings, clock } = this.deps;
    const found = await this.adoptFromProvider(record, options).catch(() => undefined);
    const current = (await ledger.get(record.transactionId)) ?? record;
    // Stored, kept as conflict, or moved by someone else meanwhile: nothing to expire.
    if (found || current.status !== PENDING_SUBMISSION) return current;
    if (clock() - record.queuedAtMs < settings.payoutSubmissionExpiryMs) return current;
    const expired = await ledger.transition(record.transactionId, PENDING_SUBMISSION, EXPIRED);
    if (expired) await this.publish(expired);
    return expired ?? (await ledger.get(record.transactionId)) ?? record;
  }

  /**
   * The provider's payout under this payout's id, stored when it is this payout. One under the same id with
   * other fields may be this payout made wrongly, or someone else's: either way money may have left, so a payout
   * the provider never confirmed is kept as conflict (counted in every cap, never sent again) and the answer is
   * an error saying so; it is never dropped.
   */
  async adoptFromProvider(record: PayoutRecord, options: CallOptions): Promise<ConfirmedPayout | undefined> {
    const { ledger, logger } = this.deps;
    const live = await this.provider.find(record.transactionId, options).catch((error: unknown) => {
      logger.warn({ err: error, transactionId: record.transactionId }, 'could not read a payout back from the provider');
      return undefined;
    });
    if (!live) return undefined;
    if (!matchesRequest(live, record.request)) throw await this.keepAsConflict(record, live);
    await ledger.confirm(record.transactionId, live);
    return live;
  }

  /** adoptFromProvider's contradicting read-back: the payout becomes a conflict, logged, counted and published once. */
  private async keepAsConflict(record: PayoutRecord, live: ConfirmedPayout): Promise<GatewayError> {
    const { ledger, logger, metrics } = this.deps;
    const { transactionId } = record;
    // Confirmed before with these very fields: the provider's record changed since, which the reconciler logs.
    if (record.confirmed) return new IdempotencyConflictError(CONFLICT_MESSAGE);
    const conflicted = await ledger.markConflict(transactionId, PAYOUT_CONFLICT_REASON);
    if (conflicted) {
      metrics?.payoutConflict();
      // Field names only: the provider's values may be another party's payout.
      const differing = REQUEST_FIELDS.filter((field) => live[field] !== record.request[field]);
      logger.error(
        { transactionId, owner: record.owner.kind, differing, providerStatus: live.status },
        'payout conflict: the provider holds a withdrawal under this transactionId that differs from the request; kept as conflict for an operator',
      );
      await this.publish(conflicted);
      return payoutConflictError(transactionId);
    }
    const current = await ledger.get(transactionId);
    if (current?.status === CONFLICT) return payoutConflictError(transactionId);
    return new UpstreamError(
      `The provider's record of payout ${transactionId} changed while it was being read. Read it again shortly with payout(transactionId).`,
    );
  }

  /** payoutUpdated subscribers see the gateway's own status changes too. */
  async publish(record: PayoutRecord): Promise<void> {
    await this.deps.events
      .publish(record.transactionId, recordView(record))
      .catch((error: unknown) => this.deps.logger.warn({ err: error, transactionId: record.transactionId }, 'payout change could not be published'));
  }

  /** A request for a payout already recorded: the same owner and the same fields answer it, anything else conflicts. */
  private async answerRepeat(owner: PayoutOwner, record: PayoutRecord, request: PayoutRequest, options: CallOptions): Promise<PayoutView> {
    if (!sameOwner(record.owner, owner)) {
      // Says nothing about the other payout, so nobody learns what someone else paid; a merchant key reads it with
      // `payout` but cannot resend it.
      throw new IdempotencyConflictError(CONFLICT_MESSAGE);
    }
    const differing = PAYOUT_REQUEST_FIELDS.filter((field) => record.request[field] !== request[field]);
    if (differing.length > 0) {
      throw new IdempotencyConflictError(
        `transactionId ${request.transactionId} was already used for a payout with a different ${differing.join(', ')}. ` +
          'Repeat the original request exactly to get that payout, or use a new transactionId for a new payout.',
      );
    }
    if (record.status === CONFLICT) throw payoutConflictError(record.transactionId);
    if (record.status !== PENDING_SUBMISSION) return recordView(record);
    return this.submit(record, options);
  }

  /**
   * Sends a pending payout, as the one instance holding its submission claim; a caller that finds the claim held
   * waits for that submission's outcome instead of sending again (woken by the claim's release, or at its lease's
   * end), until its operation's deadline leaves too little time to send (TRY_AGAIN). A claim whose instance is gone
   * lapses within SUBMISSION_CLAIM_MS and is taken over.
   * Past PAYOUT_SUBMISSION_EXPIRY_MS it is never sent: it is reconciled with the provider instead, and expires if
   * the provider has nothing.
   */
  private async submit(record: PayoutRecord, options: CallOptions): Promise<PayoutView> {
    const { ledger, settings, clock } = this.deps;
    const claimant = randomUUID();
    let watch: ClaimReleaseWatch | undefined;
    try {
      for (;;) {
        if (clock() - record.queuedAtMs >= settings.payoutSubmissionExpiryMs) return recordView(await this.reconcilePending(record, options));
        if (await ledger.claim(record.transactionId, claimant, SUBMISSION_CLAIM_MS, settings.payoutSubmissionExpiryMs)) break;
        if (timeLeftMs(options) < MIN_SEND_MS) throw submissionInProgress(record.transactionId);
        // Listening before the read: a release after it wakes this caller, one before it shows in what it reads.
        watch ??= await this.deps.claims?.watch(record.transactionId);
        const current = await ledger.get(record.transactionId);
        if (!current) throw new BadUserInputError('The provider refused this payout; nothing was paid. Correct the input and try again.');
        if (current.status === CONFLICT) throw payoutConflictError(current.transactionId);
        if (current.status !== PENDING_SUBMISSION) return recordView(current);
        const leaseLeftMs = Math.min(SUBMISSION_CLAIM_MS, Math.max(0, (current.claimedUntilMs ?? 0) - clock()));
        await untilReleased(watch, Math.max(0, Math.min(leaseLeftMs, timeLeftMs(options) - MIN_SEND_MS)));
        record = current;
      }
    } finally {
      await watch?.stop();
    }
    return this.sendUnderClaim(record, claimant, options);
  }

  /** send(), with the claim renewed every CLAIM_RENEW_MS while it runs: the heartbeat that shows this instance alive. */
  private async sendUnderClaim(record: PayoutRecord, claimant: string, options: CallOptions): Promise<PayoutView> {
    const { ledger, logger } = this.deps;
    const heartbeat = setInterval(() => {
      ledger
        .renewClaim(record.transactionId, claimant, SUBMISSION_CLAIM_MS)
        .catch((error: unknown) => logger.warn({ err: error, transactionId: record.transactionId }, 'could not renew a payout submission claim'));
    }, CLAIM_RENEW_MS);
    heartbeat.unref();
    try {
      return await this.send(record, claimant, options);
    } finally {
      clearInterval(heartbeat);
      // The ledger holds the outcome by now: whoever waits on this claim reads it at once.
      this.deps.claims
        ?.released(record.transactionId)
        .catch((error: unknown) => logger.warn({ err: error, transactionId: record.transactionId }, 'could not announce a released payout claim'));
    }
  }

  /** The provider call of a claimed submission, and what its answer (or its failure) leaves in the ledger. */
  private async send(record: PayoutRecord, claimant: string, options: CallOptions): Promise<PayoutView> {
    const { ledger, logger } = this.deps;
    let confirmed: ConfirmedPayout;
    try {
      confirmed = await this.provider.create(record.request, options);
    } catch (error) {
      if (error instanceof BadUserInputError) {
        // Refused outright: nothing was paid.
        await ledger.remove(record.transactionId);
        throw error;
      }
      if (error instanceof IdempotencyConflictError || error instanceof UpstreamError) {
        // 409 "still processing", an idempotency clash or an unreadable answer: the provider may hold the payout,
        // so the record stays and the provider's own state decides.
        await ledger.noteFailure(record.transactionId, claimant, error.code);
        const settled = await this.adoptFromProvider(record, options);
        if (settled) return liveView(record, settled);
        throw error;
      }
      const code = error instanceof GatewayError ? error.code : 'INTERNAL_SERVER_ERROR';
      await ledger
        .noteFailure(record.transactionId, claimant, code)
        .catch((noteError: unknown) => logger.warn({ err: noteError }, 'could not note a failed payout submission'));
      logger.warn({ transactionId: record.transactionId, code }, 'payout submission failed; kept for a retry and the reconciler');
      throw error;
    }
    await ledger.confirm(record.transactionId, confirmed);
    return liveView(record, confirmed);
  }

  private async notAwaiting(transactionId: string): Promise<GatewayError> {
    const record = await this.deps.ledger.get(transactionId);
    if (!record) return new NotFoundError('No payout with that transactionId was recorded by the gateway.');
    return new BadUserInputError(`Payout ${transactionId} is ${record.status}; only a payout awaiting approval can be approved or declined.`, 'transactionId');
  }

  /**
   * A session may pay only an IBAN it verified itself; a merchant key may pay an IBAN any user verified (README,
   * "Payouts and verification"). Either way the beneficiary name must be the holder name the bank verified.
   */
  private async assertBeneficiaryVerified(owner: PayoutOwner, request: PayoutRequest): Promise<void> {
    const { beneficiaries } = this.deps;
    const iban = request.beneficiaryIban;
    if (owner.kind === 'user') {
      const verified = await beneficiaries.findForUser(owner.userId, iban);
      if (!verified) {
        throw new BeneficiaryNotVerifiedError(
          `IBAN ${iban} has not been verified by this user. Call verifyAccountHolder with the account holder's name while signed in ` +
            'to the bank that holds the account, then pay out; a different account always needs its own verification.',
        );
      }
      if (!sameHolderName(verified.name, request.beneficiaryName)) {
        throw new BeneficiaryNotVerifiedError(
          `beneficiaryName "${request.beneficiaryName}" is not the holder name the bank verified for IBAN ${iban} ("${verified.name}"). ` +
            'Use the verified holder name, or verify the account again.',
        );
      }
      return;
    }
    const holders = await beneficiaries.holdersOf(iban);
    if (holders.length === 0) {
      throw new BeneficiaryNotVerifiedError(`No user has verified IBAN ${iban}. Payouts go only to accounts an end user verified with verifyAccountHolder.`);
    }
    if (!holders.some((holder) => sameHolderName(holder.name, request.beneficiaryName))) {
      // The verified names are not listed: a merchant key should not be able to look up who holds an IBAN.
      throw new BeneficiaryNotVerifiedError(
        `beneficiaryName "${request.beneficiaryName}" is not a holder name verified for IBAN ${iban}. Use the account holder's name as their bank reported it.`,
      );
    }
  }

  /** The record's payout with the provider's current status, stored back when it moved. */
  private async livePayout(record: PayoutRecord, options: CallOptions, reads: PayoutReads): Promise<PayoutView> {
    // Final, or never sent (awaiting approval): the stored state is as live as a GET.
    if (payoutLifecycle.isFinal(record.status) || record.status === AWAITING_APPROVAL) return recordView(record);
    const live = await this.liveRead(record.transactionId, options, reads);
    // Not at the provider: a submission that never got through. It shows as pending-submission until sent or expired.
    if (!live || !(await this.storeLive(record, live))) return recordView(record);
    return liveView(record, live);
  }

  /**
   * Stores a payout read from the provider when it is this payout's (it is never the payout's when the record
   * was not confirmed yet and the fields differ); false when it is not.
   */
  private async storeLive(record: PayoutRecord, live: ConfirmedPayout): Promise<boolean> {
    if (payoutLifecycle.isFinal(record.status) || record.status === AWAITING_APPROVAL) return false;
    if (!record.confirmed && !matchesRequest(live, record.request)) return false;
    if (JSON.stringify(live) !== JSON.stringify(record.confirmed)) {
      await this.deps.ledger
        .confirm(record.transactionId, live)
        .catch((error: unknown) => this.deps.logger.warn({ err: error, transactionId: record.transactionId }, 'could not store a payout status'));
    }
    return true;
  }

  /** GET once per operation per payout; undefined when the provider has none. */
  private liveRead(transactionId: string, options: CallOptions, reads: PayoutReads): Promise<ConfirmedPayout | undefined> {
    let read = reads.get(transactionId);
    if (!read) {
      read = this.provider.find(transactionId, options);
      reads.set(transactionId, read);
    }
    return read;
  }
}

/** The request fields a read-back must repeat for it to be this payout's (matchesRequest). */
const REQUEST_FIELDS = ['beneficiaryIban', 'amountInMinor', 'currency', 'beneficiaryReference', 'beneficiaryName'] as const;

/** What a client is told of a payout kept as conflict, on the send that found it and on every repeat. */
function payoutConflictError(transactionId: string): UpstreamError {
  return new UpstreamError(
    `Payout ${transactionId} may have been made: the provider's answer to it was lost, and its record under this transactionId differs from this request. ` +
      'The payout is kept with status conflict and counts toward the payout limits until the merchant settles it with the provider. ' +
      'Do not pay it again under a new transactionId: that could pay twice. Read it with payout(transactionId).',
    { reason: PAYOUT_CONFLICT_REASON },
  );
}

/** What the retry of a payout another request is sending is told when its operation's deadline comes first. */
function submissionInProgress(transactionId: string): TryAgainError {
  return new TryAgainError(
    `Payout ${transactionId} is being sent to the provider by another request, and its outcome was not known before this operation's deadline; ` +
      'this request sent nothing. Send the same request again, with the same transactionId, in a moment to get its outcome, or read it with ' +
      'payout(transactionId). A new transactionId would pay again.',
    1,
  );
}

/** Waits `ms` at most for the claim's release; without signals, the whole `ms` (the lease's end or the deadline's margin). */
function untilReleased(watch: ClaimReleaseWatch | undefined, ms: number): Promise<void> {
  return watch ? watch.next(ms) : new Promise((resolve) => setTimeout(resolve, ms));
}

/** Milliseconds left before the operation's deadline; unbounded for a call made outside an operation. */
function timeLeftMs(options: CallOptions): number {
  return options.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline.at - performance.now();
}

/** The owner and every field that makes a payout what it is: identical requests share it. */
export function fingerprintOf(owner: PayoutOwner, request: PayoutRequest, agent?: PayoutAgent): string {
  const parts = [
    ownerKey(owner),
    request.beneficiaryIban,
    request.beneficiaryName,
    request.beneficiaryReference,
    String(request.amountInMinor),
    request.currency,
    ...(agent ? ['agent'] : []),
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

function matchesRequest(live: ConfirmedPayout, request: PayoutRequest): boolean {
  return REQUEST_FIELDS.every((field) => live[field] === request[field]);
}
