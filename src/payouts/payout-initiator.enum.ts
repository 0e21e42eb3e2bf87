import { registerEnumType } from 'type-graphql';
import type { PayoutInitiator as PayoutInitiatorName } from './payout.model';

// Values equal the names, as PayoutStatus's, and are exactly the domain's PayoutInitiator.
export const PayoutInitiator = {
  USER: 'USER',
  MERCHANT: 'MERCHANT',
  AGENT: 'AGENT',
} as const satisfies { [K in PayoutInitiatorName]: K };
export type PayoutInitiator = PayoutInitiatorName;

registerEnumType(PayoutInitiator, {
  name: 'PayoutInitiator',
  description: 'Who asked for a payout.',
  valuesConfig: {
    USER: { description: 'A signed-in user, for their own payout.' },
    MERCHANT: { description: 'A merchant key.' },
    AGENT: { description: "An agent (an MCP client) proposed it for its principal; it always waited for a merchant key's approval." },
  },
});
