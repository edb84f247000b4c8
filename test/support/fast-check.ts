/**
 * fast-check with one seed for the whole Jest run, so any failure can be drawn again. A property's own
 * failure prints its seed; a failure after the property passed (a warning no test captured) is one
 * fast-check never sees, so warning-guard.ts prints this seed. `SLUICE_FC_SEED=<seed> pnpm test`
 * reruns the same draws. Test files import fast-check from here (biome.json says so).
 */
// biome-ignore lint/style/noRestrictedImports: the one place fast-check is configured
import fc from 'fast-check';

/** The run's seed: global-setup.cjs draws one if SLUICE_FC_SEED is unset; a file run alone draws its own. */
export const FAST_CHECK_SEED = Number(process.env.SLUICE_FC_SEED ?? (Math.random() * 2 ** 31) | 0);
process.env.SLUICE_FC_SEED = String(FAST_CHECK_SEED);
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: FAST_CHECK_SEED });

export default fc;
