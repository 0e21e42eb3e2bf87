import type { Migration } from 'kysely';
import * as leases from './0001_leases';
import * as money from './0002_money';
import * as identity from './0003_identity';
import * as identityPeople from './0004_identity_people';
import * as payoutLimits from './0005_payout_limits';
import * as sessions from './0006_sessions';
import * as dataTasks from './0007_data_tasks';
import * as refundAttempts from './0008_refund_attempts';
import * as hardening from './0009_hardening';
import * as loginOrigin from './0010_login_origin';
import * as payoutAgent from './0011_payout_agent';

/**
 * Every migration, in order. Listed here rather than read from a folder, so the same list runs from dist/, from
 * jest and from `npm run migrate`. Names sort in the order they run; a released migration never changes.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_leases': leases,
  '0002_money': money,
  '0003_identity': identity,
  '0004_identity_people': identityPeople,
  '0005_payout_limits': payoutLimits,
  '0006_sessions': sessions,
  '0007_data_tasks': dataTasks,
  '0008_refund_attempts': refundAttempts,
  '0009_hardening': hardening,
  '0010_login_origin': loginOrigin,
  '0011_payout_agent': payoutAgent,
};
