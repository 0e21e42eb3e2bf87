import 'reflect-metadata';
import { ArgsType, Field } from 'type-graphql';
import { StartDataTaskInput } from './start-data-task.input';

/** Mutation.startDataTask. */
@ArgsType()
export class StartDataTaskArgs {
  @Field(() => StartDataTaskInput)
  input!: StartDataTaskInput;
}
