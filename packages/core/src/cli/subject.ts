import type { HttpConfig } from '../http/options.js';
import { SubjectResolver } from '../http/subject.js';
import type { RequestReader, SubjectSource } from '../http/types.js';
import type { Who } from './args.js';
import { usageError } from './exit-codes.js';

/** The kinds every subject the HTTP layer makes starts with (http/subject.ts). */
const KINDS = ['ip:', 'key:', 'token:', 'id:'] as const;

/**
 * A --subject the app's options could have produced: one without a kind never matches, and was
 * answered "allowed now (nothing counted)" (newcomer review 28). A module exporting a limiter is let
 * be: code that calls `limiter.consume('user-42')` itself counts whatever it passes.
 */
export function checkSubjectKind(who: Who): void {
  if (who.kind !== 'subject' || KINDS.some((k) => who.value.startsWith(k))) return;
  throw usageError(
    `--subject: ${JSON.stringify(who.value)} has no kind, and every subject the app counts has one (${KINDS.slice(0, -1).join(', ')} or ${KINDS.at(-1)}); what verify or a subject function returned is id:<value>: write --id ${who.value}`,
  );
}

/** What the app stores after `key:` or `token:`: a SHA-256 (or HMAC) digest, base64url. */
const DIGEST = /^[A-Za-z0-9_-]{43}$/;

/**
 * A `--subject key:` or `token:` whose value is no digest, so a raw credential (which the app never
 * stores, and which finds nothing); undefined for any other subject.
 */
export function rawCredentialIn(subject: string): string | undefined {
  const kind = KINDS.find((k) => (k === 'key:' || k === 'token:') && subject.startsWith(k));
  return kind === undefined || DIGEST.test(subject.slice(kind.length)) ? undefined : kind;
}

/**
 * The subject as the command prints it. A raw credential is shown as its length only: the app's own
 * messages hide a secret-looking value so (errors.ts describeValue), and the app never logs one.
 */
export function shownSubject(subject: string): string {
  const kind = rawCredentialIn(subject);
  return kind === undefined ? subject : `${kind}<a string of ${subject.length - kind.length} characters>`;
}

/** A request that carries only what the operator gave: an address, an API key or a token. */
interface Given {
  readonly ip: string | undefined;
  readonly headers: ReadonlyMap<string, string>;
  readonly query: ReadonlyMap<string, string>;
}

const reader: RequestReader<Given> = {
  ip: (req) => req.ip,
  header: (req, name) => req.headers.get(name),
  query: (req, name) => req.query.get(name),
};

/**
 * The subject the app's limiter counts `who` under. Addresses, keys and tokens go through the app's
 * own resolver (its ipv6Subnet, apiKey, verify and credentialSecret), so the key found is the app's.
 */
export async function subjectOf(who: Who, config: HttpConfig<unknown, unknown>): Promise<string> {
  if (who.kind === 'subject') return who.value;
  if (who.kind === 'id') return `id:${who.value}`;
  const { apiKeyHeader, apiKeyQuery } = config.subject;
  const headers = new Map<string, string>();
  const query = new Map<string, string>();
  let source: SubjectSource<Given> = 'ip';
  if (who.kind === 'api-key') {
    source = 'api-key';
    if (apiKeyHeader !== undefined) headers.set(apiKeyHeader, who.value);
    else if (apiKeyQuery !== undefined) query.set(apiKeyQuery, who.value);
  } else if (who.kind === 'token') {
    source = 'token';
    headers.set('authorization', `Bearer ${who.value}`);
  }
  const resolver = new SubjectResolver<Given>({ ...config.subject, sources: [source] }, reader);
  const ip = who.kind === 'ip' ? who.value : undefined;
  // Only the given source is tried, so falling back to the address means the value was refused.
  const { subject } = await resolver.resolve({ ip, headers, query });
  if (who.kind !== 'ip' && subject.startsWith('ip:')) {
    throw usageError(
      who.kind === 'token'
        ? '--token: not a bearer token the app would read (token68 characters only)'
        : `--api-key: the app's verify refused this key (returned null), so it has no limit of its own`,
    );
  }
  return subject;
}
