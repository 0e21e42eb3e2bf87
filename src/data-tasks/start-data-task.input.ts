import 'reflect-metadata';
import { Field, ID, InputType } from 'type-graphql';
import { DataResource } from './data-resource.enum';
import { DateScalar } from '../platform/graphql/scalars/date.scalar';

@InputType()
export class StartDataTaskInput {
  @Field(() => DataResource)
  resource!: DataResource;

  @Field(() => ID, { nullable: true, description: 'The account or card id, for the per-account and per-card resources.' })
  id?: string | null;

  @Field(() => DateScalar, { nullable: true })
  from?: string | null;

  @Field(() => DateScalar, { nullable: true })
  to?: string | null;

  @Field(() => ID, {
    nullable: true,
    description: 'Which bank connection to ask (viewer.connections); by default the one showing the account or card, else the oldest.',
  })
  connectionId?: string | null;
}
