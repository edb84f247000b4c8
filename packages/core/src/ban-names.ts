import { digest } from './keys.js';

/** The policy a ban's marker limiter counts under: what a banned request's answer names. */
export const BAN_POLICY = 'ban';
/** The policy a ban's strikes limiter counts under. */
export const STRIKES_POLICY = 'strikes';

/**
 * The names of the two limiters a guarded limiter's ban keeps in its store (http/ban.ts): one place,
 * so that the guarded limiter's `reset` finds them from any process, with or without a ban of its own.
 * Limiter names are at most 256 characters; a long one is shortened to its digest.
 */
export function banNames(limiterName: string): { strikes: string; marker: string } {
  const base = limiterName.length > 240 ? digest(limiterName) : limiterName;
  return { strikes: `${base}#strikes`, marker: `${base}#ban` };
}
