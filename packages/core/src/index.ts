export type { AlgorithmName } from './algorithms/index.js';
export type { Decision, PolicyInfo, PolicyState } from './decision.js';
export type {
  CircuitMessage,
  CircuitState,
  DecisionMessage,
  StoreErrorMessage,
} from './diagnostics.js';
export { DiagnosticChannels } from './diagnostics.js';
export type { Duration } from './duration.js';
export type { ErrorCode } from './errors.js';
export { ErrorCodes, SluiceConfigError } from './errors.js';
export type { FrameworkRequest, HandlerApi } from './http/adapter.js';
export {
  abandonIfLate,
  afterHandler,
  answerForHandler,
  callHandler,
  frameworkReader,
  passOn,
  passOnAwaiting,
  socketGone,
  withGetIp,
  withHandlerApi,
} from './http/adapter.js';
export type { GraphqlExchange } from './http/graphql.js';
export { graphqlExchange, graphqlRefusal, oncePerRequest } from './http/graphql.js';
export type { HttpHandler, HttpOutcome } from './http/handle.js';
export { createHttpHandler, PROBLEM_CONTENT_TYPE, UnknownPlanError } from './http/handle.js';
export type { HeaderMode } from './http/headers.js';
export { mergeHttpOptions } from './http/merge.js';
export { forwardedByPrivateProxies, isPrivateAddress } from './http/private-proxies.js';
export { setDecision } from './http/request-decision.js';
export type { ProblemBody } from './http/responses.js';
export { checkTrustProxy } from './http/trust-proxy.js';
export type { HttpOptions, ProxyTrust, RequestReader, SubjectSource } from './http/types.js';
export type { WarningCode } from './http/validate.js';
export { WarningCodes } from './http/validate.js';
export type { CallOptions, Limiter } from './limiter.js';
export { createLimiter } from './limiter.js';
export type { LimiterOptions, OnStoreError, Policy } from './options.js';
export type { ClusterStoreOptions } from './stores/cluster/cluster-store.js';
export { ClusterStore } from './stores/cluster/cluster-store.js';
export type { ClusterPrimary, ClusterPrimaryOptions } from './stores/cluster/primary.js';
export type { MemoryStoreOptions } from './stores/memory-store.js';
export { MemoryStore } from './stores/memory-store.js';
export type { PgQueryable } from './stores/postgres/clients/pg.js';
export type { PostgresJsSql } from './stores/postgres/clients/postgres-js.js';
export type { PostgresClient } from './stores/postgres/clients/runner.js';
export type { PostgresStoreOptions } from './stores/postgres/postgres-store.js';
export { PostgresStore } from './stores/postgres/postgres-store.js';
export type { RedisScriptClient } from './stores/redis/clients/ioredis.js';
export type { NodeRedisScriptClient, NodeRedisScriptCluster } from './stores/redis/clients/node-redis.js';
export type { RedisClient } from './stores/redis/clients/runner.js';
export type { RedisStoreOptions } from './stores/redis/redis-store.js';
export { RedisStore } from './stores/redis/redis-store.js';
export type {
  PolicyOutcome,
  RefundCall,
  Store,
  StoreCall,
  StoreLimiter,
  StoreOutcome,
  StorePolicy,
} from './stores/store.js';
/** For stores of one's own: where and how long a reset mark is kept (docs/stores.md). */
export { markLifeMs, markOf } from './stores/store.js';
