import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { Account } from './account.type';
import { Card } from './card.type';
import { Payout } from '../payouts/payout.type';
import { VerifiedBeneficiary } from '../beneficiaries/verified-beneficiary.type';

/**
 * The signed-in user's corner of the graph. Every field is resolved by @FieldResolver methods, so all are optional
 * here: a resolver returns `new Viewer()` (or `{}`) and the fields fill in on demand. A field outside the public
 * contract (connections) is declared by its @FieldResolver alone; the contract's fields are declared here, so a
 * schema built from the classes alone has them. `account` and `card` get their `id` argument from the field
 * resolver's @Args() IdArgs.
 */
@ObjectType({ simpleResolvers: true })
export class Viewer {
  @Field(() => ID, { description: "The durable user's id: the same across sign-ins, sessions and bank connections." })
  id?: string;

  @Field(() => [Account])
  accounts?: Account[];

  @Field(() => Account, { nullable: true })
  account?: Account | null;

  @Field(() => [Card])
  cards?: Card[];

  @Field(() => Card, { nullable: true })
  card?: Card | null;

  @Field(() => [VerifiedBeneficiary], {
    description: 'IBANs this user has verified; payouts may go to these without a new verification.',
  })
  verifiedBeneficiaries?: VerifiedBeneficiary[];

  @Field(() => [Payout], { description: 'Payouts this user created, newest first.' })
  payouts?: Payout[];
}
