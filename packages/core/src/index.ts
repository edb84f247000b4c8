/**
 * Node's entry: the entry for every runtime (edge.ts) and what needs Node: ClusterStore (node:cluster),
 * `setDecision` (Express's request prototype), and decisions published on node:diagnostics_channel.
 */
import { channel } from 'node:diagnostics_channel';
import { useChannels } from './diagnostics.js';

useChannels(channel);

export * from './edge.js';
export type { GraphqlExchange } from './http/node/graphql.js';
export { graphqlExchange, graphqlRefusal, oncePerRequest } from './http/node/graphql.js';
export { setDecision } from './http/node/request-decision.js';
export type { ClusterStoreOptions } from './stores/cluster/cluster-store.js';
export { ClusterStore } from './stores/cluster/cluster-store.js';
export type { ClusterPrimary, ClusterPrimaryOptions } from './stores/cluster/primary.js';
// PostgreSQL: Node only (its clients are), kept out of the edge entry.
export type { PgQueryable } from './stores/postgres/clients/pg.js';
export type { PostgresJsSql } from './stores/postgres/clients/postgres-js.js';
export type { PostgresClient } from './stores/postgres/clients/runner.js';
export type { PostgresStoreOptions } from './stores/postgres/postgres-store.js';
export { PostgresStore } from './stores/postgres/postgres-store.js';
