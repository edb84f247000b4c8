import { ErrorCodes, SluiceConfigError } from '@sluice/core';

/**
 * @nestjs/throttler 6's shapes, pasted unchanged: `ThrottlerModule.forRoot([{ ttl, limit }])` (a list
 * of throttlers) and `@Throttle({ default: { limit, ttl } })` (throttlers by name). Sluice's checks saw
 * an array ("expected an object") or an unknown option `default` with no hint, or a typo's hint
 * (`short` → `store`). Told apart here, before them: what to write instead, with every ttl given.
 */
type Entry = Record<string, unknown>;

const isEntry = (value: unknown): value is Entry =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A throttler: `limit` and `ttl`, either of which @Throttle may leave to the module. */
const isThrottler = (value: unknown): value is Entry =>
  isEntry(value) && (Object.hasOwn(value, 'ttl') || Object.hasOwn(value, 'limit'));

/** A throttler as a Sluice policy: ttl in milliseconds (as in @nestjs/throttler 6) is `window`. */
function policyText(entry: Entry, name: string | undefined): string {
  const parts: string[] = [];
  if (name !== undefined) parts.push(`name: ${JSON.stringify(name)}`);
  if (entry.limit !== undefined) parts.push(`limit: ${String(entry.limit)}`);
  if (entry.ttl !== undefined) parts.push(`window: ${String(entry.ttl)}`);
  return `{ ${parts.join(', ')} }`;
}

/** What the throttlers are in Sluice: one policy as the shorthand, several as named `policies`. */
function translated(throttlers: readonly (readonly [string | undefined, Entry])[]): string {
  if (throttlers.length === 1) return policyText(throttlers[0]![1], undefined);
  return `{ policies: [${throttlers.map(([name, e]) => policyText(e, name)).join(', ')}] }`;
}

/** Every ttl, and every key that is no policy's, by where it stands. */
function details(throttlers: readonly (readonly [string, Entry])[]): string {
  const said: string[] = [];
  for (const [where, entry] of throttlers) {
    if (entry.ttl !== undefined)
      said.push(
        `${where}.ttl: ${String(entry.ttl)} ms is window: ${String(entry.ttl)} (or a string such as '1m')`,
      );
    for (const key of Object.keys(entry).filter((k) => !['name', 'limit', 'ttl'].includes(k)))
      said.push(
        `${where}.${key}: not a policy option; give it beside the policies (its own hint says what Sluice calls it)`,
      );
  }
  return said.join('; ');
}

/** Throws for a @nestjs/throttler shape given to `SluiceModule.forRoot` / `forRootAsync`. */
export function rejectThrottlerModuleOptions(options: unknown): void {
  if (!Array.isArray(options) || !options.every(isThrottler)) return;
  const throttlers = options.map((e) => [typeof e.name === 'string' ? e.name : undefined, e] as const);
  throw new SluiceConfigError(
    ErrorCodes.INVALID_OPTION,
    'options',
    `a list of @nestjs/throttler throttlers; SluiceModule.forRoot takes one options object: write SluiceModule.forRoot(${translated(throttlers)}), the policies decided together. ${details(options.map((e, i) => [`[${i}]`, e] as const))}`,
  );
}

/** Throws for @Throttle's `{ name: { limit, ttl } }` given to `@RateLimit()`. */
export function rejectThrottleDecoratorOptions(options: object): void {
  const named = Object.entries(options).filter(([, value]) => isThrottler(value)) as [string, Entry][];
  if (named.length === 0) return;
  const shorthand = named.length === 1 && named[0]![0] === 'default';
  const throttlers = named.map(([name, e]) => [shorthand ? undefined : name, e] as const);
  throw new SluiceConfigError(
    ErrorCodes.UNKNOWN_OPTION,
    named[0]![0],
    `@Throttle's throttlers by name; @RateLimit takes the options themselves: write @RateLimit(${translated(throttlers)}) (what it does not set comes from the module's). ${details(named)}`,
  );
}
