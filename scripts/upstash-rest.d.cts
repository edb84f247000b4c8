export interface UpstashStandIn {
  readonly url: string;
  readonly token: string;
  /** HTTP requests answered so far, and the commands they carried. */
  readonly requests: Array<{ path: string; commands: string[][] }>;
  close(): Promise<void>;
}

/** A stand-in for Upstash's REST API on 127.0.0.1 in front of the redis-server at `redisUrl`. */
export function startUpstashStandIn(redisUrl: string, token?: string): Promise<UpstashStandIn>;

/** The stand-in in a process of its own (see upstash-rest.cjs): its requests counted over IPC. */
export interface SpawnedUpstashStandIn {
  readonly url: string;
  readonly token: string;
  /** HTTP requests answered so far. */
  requests(): Promise<number>;
  close(): Promise<void>;
}

export function spawnUpstashStandIn(redisUrl: string): Promise<SpawnedUpstashStandIn>;
