import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, specifiedDirectives, type GraphQLSchema } from 'graphql';
import {
  buildSchema,
  type AuthChecker,
  type ClassType,
  type ContainerGetter,
  type ContainerType,
  type NonEmptyArray,
  type PubSub,
  type SubscribeResolverData,
} from 'type-graphql';
import { Money } from './types/money.type';
import { PageInfo } from './types/page-info.type';
import { DateTimeScalar } from './scalars/date-time.scalar';
import { INCREMENTAL_DIRECTIVES } from './incremental-delivery';

/**
 * For building the schema only (`npm run schema`, schema tests): type-graphql insists on a PubSub once any
 * @Subscription exists, even though this gateway's subscriptions bring their own `subscribe` functions. A server
 * passes its event bus (createGateway does); this one refuses to carry events, so forgetting that shows at once.
 */
const SCHEMA_ONLY_PUBSUB: PubSub = {
  publish() {
    throw new Error('this schema was built without a pubSub; pass the gateway event bus to buildGatewaySchema');
  },
  subscribe() {
    throw new Error('this schema was built without a pubSub; pass the gateway event bus to buildGatewaySchema');
  },
};

/**
 * A subscription field's source of events, made by the composition root with the dependencies it reads:
 * type-graphql calls a decorator's `subscribe` without the resolver instance, so the stream is handed to the schema.
 */
export type SubscriptionStream<TContext> = (args: Record<string, unknown>, context: TContext) => Promise<AsyncIterable<unknown>>;

/**
 * The `subscribe` a @Subscription declares: its stream is handed to buildGatewaySchema (`streams`) by the gateway,
 * so a schema built only to be printed refuses to run one.
 */
export const STREAM_GIVEN_AT_START_UP = ({ info }: SubscribeResolverData): never => {
  throw new Error(`Subscription.${info.fieldName} has no stream: this schema was built without the gateway's streams (buildGatewaySchema's streams)`);
};

export interface GatewaySchemaOptions<TContext extends object = object> {
  resolvers: NonEmptyArray<ClassType>;
  /** The event bus a server's subscriptions use; omitted when the schema is only printed. */
  pubSub?: PubSub;
  /** Required as soon as a resolver uses @Authorized. */
  authChecker?: AuthChecker<TContext>;
  container?: ContainerType | ContainerGetter<TContext>;
  /** Every type of the contract, in the schema whichever resolvers reach it (the composition root lists them). */
  types?: ClassType[];
  /** Each Subscription field's stream, by field name; omitted when the schema is only printed. */
  streams?: Readonly<Record<string, SubscriptionStream<TContext>>>;
}

/*
 * Every object type is declared with `simpleResolvers: true`: its plain fields then have no resolver and skip
 * type-graphql's middleware pipeline (the gateway uses no middleware and no @Authorized), which costs measurably on
 * lists of hundreds of transactions and on every account and card. Fields with a @FieldResolver keep theirs.
 */
export async function buildGatewaySchema<TContext extends object = object>(options: GatewaySchemaOptions<TContext>): Promise<GraphQLSchema> {
  const schema = await buildSchema({
    resolvers: options.resolvers,
    orphanedTypes: [Money, PageInfo, ...(options.types ?? [])],
    // A property typed as a JS Date would otherwise become type-graphql's own DateTimeISO scalar, a second
    // date-time type next to the contract's.
    scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
    // Inputs are checked by the scalars and by resolvers with errors that carry our codes; class-validator is not used.
    validate: false,
    // The committed schema.graphql is written by printGatewaySchema, so its format is ours and not type-graphql's.
    emitSchemaFile: false,
    pubSub: options.pubSub ?? SCHEMA_ONLY_PUBSUB,
    // Given directives replace graphql-js's own, so @skip, @include and the rest are listed again.
    directives: [...specifiedDirectives, ...INCREMENTAL_DIRECTIVES],
    ...(options.authChecker === undefined ? {} : { authChecker: options.authChecker }),
    ...(options.container === undefined ? {} : { container: options.container }),
  });
  if (options.streams) giveStreams(schema, options.streams);
  return schema;
}

/** Every Subscription field gets its stream, and every stream a field: a missing or misnamed one stops start-up. */
function giveStreams<TContext>(schema: GraphQLSchema, streams: Readonly<Record<string, SubscriptionStream<TContext>>>): void {
  const fields = schema.getSubscriptionType()?.getFields() ?? {};
  for (const name of Object.keys(streams)) {
    if (!fields[name]) throw new Error(`a stream was given for Subscription.${name}, which the schema does not have`);
  }
  for (const [name, field] of Object.entries(fields)) {
    const stream = streams[name];
    if (!stream) throw new Error(`Subscription.${name} was given no stream`);
    field.subscribe = (_source, args: Record<string, unknown>, context: TContext) => stream(args, context);
  }
}

/**
 * The SDL of the schema with types, fields, arguments and enum values in alphabetical order, so the committed
 * file changes only when the schema does, not when declarations or resolver lists are reordered.
 */
export function printGatewaySchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
