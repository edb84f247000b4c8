#!/usr/bin/env node
/**
 * `sluice inspect|reset`: a subject's limits as the app sees them, from outside the app. It parses the
 * app's own options with the app's own code (parseHttpOptions, the subject resolver, the key and hash
 * functions), so it reads and resets exactly the keys the app writes. See docs/operator.md.
 */
import { SluiceConfigError } from '../errors.js';
import { parseHttpOptions } from '../http/options.js';
import { parseCli, USAGE, wantsHelp } from './args.js';
import { banWarnings, resetBanText } from './ban-check.js';
import { inspect, reset } from './commands.js';
import { countedWarnings } from './counted-check.js';
import { type CliWarning, credentialWarnings, refuseUnconfirmedReset } from './credential-check.js';
import { CliError, type ExitCode, ExitCodes } from './exit-codes.js';
import { limiterSource } from './limiter-options.js';
import { redactUrls } from './redact.js';
import { inspectText, resetText } from './report.js';
import { checkSubjectKind, rawCredentialIn, shownSubject, subjectOf } from './subject.js';

async function main(argv: readonly string[]): Promise<ExitCode> {
  if (wantsHelp(argv)) {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? ExitCodes.USAGE : ExitCodes.OK;
  }
  const args = parseCli(argv);
  // Flags are HTTP options: checked before connecting. A module is checked once known not a limiter.
  if (args.config === undefined) checkSubjectKind(args.who);
  const source = await limiterSource(args);
  try {
    if (source.secret.fromAppOptions) checkSubjectKind(args.who);
    // The app's warnings are for the app: the operator's run answers for itself.
    const config = parseHttpOptions({ ...source.options, validate: false });
    const subject = await subjectOf(args.who, config);
    const warnings = credentialWarnings(args.who, config, source.secret);
    if (args.command === 'reset') refuseUnconfirmedReset(args.who, warnings);
    warn(warnings);
    // The ban's warning says only that the ban is unknown; it is the same for both commands.
    const banUnknown = banWarnings(config, source.secret.fromAppOptions);
    const given = args.config === undefined ? 'flags' : source.unnamed ? 'unnamed-module' : 'module';
    const rawCredential = rawCredentialIn(subject);
    // A raw credential given as a subject is never printed back (text or --json).
    const shown = shownSubject(subject);
    if (args.command === 'reset') {
      const { limiters, banLifted, counted } = await reset(config, subject, args.plan, source.failure);
      const uncounted = countedWarnings(counted, given, {
        store: source.opened?.elsewhere,
        banLifted,
        rawCredential,
      });
      const also = [...banUnknown, ...uncounted];
      warn(also);
      write(
        args.json,
        { command: 'reset', subject: shown, limiters, banLifted, counted, warnings: [...warnings, ...also] },
        resetText(shown, source.storeLabel, limiters, {
          counted,
          banLifted,
          ban: resetBanText(config, banLifted, source.secret.fromAppOptions),
        }),
      );
      return ExitCodes.OK;
    }
    const reports = await inspect(config, subject, args.plan, source.failure);
    const allowed = reports.every((r) => r.allowed);
    // The credential's warnings (and a raw credential as a subject) make "allowed" unconfirmed; the
    // ban's only that the ban is unknown.
    const uncounted = countedWarnings(
      reports.some((r) => r.counted),
      given,
      { store: source.opened?.elsewhere, rawCredential },
    );
    warn([...banUnknown, ...uncounted]);
    write(
      args.json,
      {
        command: 'inspect',
        subject: shown,
        allowed,
        limiters: reports,
        warnings: [...warnings, ...banUnknown, ...uncounted],
      },
      inspectText(shown, source.storeLabel, reports, {
        unconfirmed: warnings.length > 0 || rawCredential !== undefined,
        banChecked: banUnknown.length === 0,
      }),
    );
    return allowed ? ExitCodes.OK : ExitCodes.LIMITED;
  } finally {
    await source.opened?.close();
  }
}

/** On stderr, so that --json's stdout stays one object (which carries them too). */
function warn(warnings: readonly CliWarning[]): void {
  for (const w of warnings) printErr(`sluice: warning: ${w.message}`);
}

function write(json: boolean, value: unknown, text: string): void {
  process.stdout.write(`${redactUrls(json ? JSON.stringify(value) : text)}\n`);
}

/** Every line for stderr: an address in a message (a client's error, say) loses its password here. */
function printErr(line: string): void {
  process.stderr.write(`${redactUrls(line)}\n`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof CliError) {
      printErr(`sluice: ${error.message}`);
      process.exit(error.exitCode);
    }
    if (error instanceof SluiceConfigError) {
      printErr(`sluice: ${error.code}: ${error.message}`);
      process.exit(ExitCodes.USAGE);
    }
    printErr(`sluice: unexpected error: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(ExitCodes.UNEXPECTED);
  },
);
