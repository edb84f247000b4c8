/**
 * The entry for every runtime (workerd, Vercel's Edge Runtime, Deno, Bun, browsers): the whole API but
 * what needs Node (ClusterStore, `setDecision` on Express's request, diagnostics channels), with no
 * Node built-in imported on its path. Node's entry (index.ts) adds those; package.json's conditions
 * choose between them, and test/runtimes/edge-bundle.test.ts holds this one to it.
 */
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
export type { HandlerApi } from './http/adapter.js';
export { afterHandler, callHandler, giveBack, withGetIp, withHandlerApi } from './http/adapter.js';
export type { HttpHandler, HttpOutcome } from './http/handle.js';
export { createHttpHandler, isGone, PROBLEM_CONTENT_TYPE, UnknownPlanError } from './http/handle.js';
export type { HeaderMode } from './http/headers.js';
export { mergeHttpOptions } from './http/merge.js';
export type { FrameworkRequest } from './http/node/response.js';
// Node's http glue imports node:http for types only: Hono, which runs everywhere, calls it on Node.
export {
  abandonIfLate,
  answerForHandler,
  frameworkReader,
  passOn,
  passOnAwaiting,
  socketGone,
} from './http/node/response.js';
export { forwardedByPrivateProxies, isPrivateAddress } from './http/private-proxies.js';
export type { ProblemBody } from './http/responses.js';
export { checkTrustProxy } from './http/trust-proxy.js';
export type { HttpOptions, ProxyTrust, RequestReader, SubjectSource } from './http/types.js';
export type { WarningCode } from './http/validate.js';
export { WarningCodes } from './http/validate.js';
export type { CallOptions, Limiter } from './limiter.js';
export { createLimiter } from './limiter.js';
export type { LimiterOptions, OnStoreError, Policy } from './options.js';
export type { MemoryStoreOptions } from './stores/memory-store.js';
export { MemoryStore } from './stores/memory-store.js';
export type { RedisScriptClient } from './stores/redis/clients/ioredis.js';
export type { NodeRedisScriptClient, NodeRedisScriptCluster } from './stores/redis/clients/node-redis.js';
export type { RedisClient } from './stores/redis/clients/runner.js';
export type { UpstashScriptClient } from './stores/redis/clients/upstash.js';
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
