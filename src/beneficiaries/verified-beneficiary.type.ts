import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';

/** The global id's tag of a verified beneficiary: `vb`, then its key (verification.mapper.ts), which does not spell the IBAN. */
export const VERIFIED_BENEFICIARY_TAG = 'vb';

@ObjectType({ simpleResolvers: true, implements: Node })
export class VerifiedBeneficiary implements Node {
  /** Not a GraphQL field: what the global id carries. */
  key!: string;

  @Field(() => ID)
  get id(): string {
    return toGlobalId(VERIFIED_BENEFICIARY_TAG, this.key);
  }

  @Field(() => String)
  iban!: string;

  @Field(() => String)
  name!: string;

  @Field(() => DateTimeScalar)
  verifiedAt!: string;
}
