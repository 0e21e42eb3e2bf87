import 'reflect-metadata';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSchema } from 'type-graphql';
import { NaiveAccountResolver } from '../naive/account.resolver';
import { NaiveCardResolver } from '../naive/card.resolver';
import type { NaiveContext } from '../naive/naive.context';
import { NaiveViewerResolver } from '../naive/viewer.resolver';
import { DateTimeScalar } from '../../src/platform/graphql/scalars/date-time.scalar';
import { runChild } from './child.runtime';

export interface NaiveInit {
  dataUrl: string;
}

// The baseline gateway, started the way its tutorials start it: stock Apollo Server, standalone, with the
// type-graphql schema built from the naive resolvers alone (the gateway's own resolvers are not loaded here).
runChild(async (init) => {
  const { dataUrl } = init as NaiveInit;
  const schema = await buildSchema({
    resolvers: [NaiveViewerResolver, NaiveAccountResolver, NaiveCardResolver],
    // As in bankgraph's build-schema: JS Dates map to the contract's DateTime scalar.
    scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
    validate: false,
  });
  const apollo = new ApolloServer<NaiveContext>({ schema });
  const { url } = await startStandaloneServer(apollo, {
    listen: { port: 0, host: '127.0.0.1' },
    context: async ({ req }) => ({ accessToken: /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1], dataUrl }),
  });
  return { info: { url: url.replace(/\/$/, '') }, close: () => apollo.stop() };
});
