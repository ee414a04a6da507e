import type { Command } from 'commander';
import type { OperationView } from '../../store/operator-store.js';
import { CommandFailure, databaseCommand, type DatabaseFlags, identityLabel, output } from '../database-command.js';
import { KEY_DESCRIPTION, keyArgument } from '../key-argument.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

interface InspectFlags extends DatabaseFlags {
  readonly showBody?: boolean;
}

/** `retrysafe inspect <tenant> <operation> <key>`: one operation record, in full. */
export function registerInspect(program: Command, source: OperatorToolsSource): Command {
  return databaseCommand(program, 'inspect')
    .description(
      'Show one operation: state, mode, times, lease, failures, next attempt and last error, fingerprint prefix, status, and steps with their downstream keys.',
    )
    .argument('<tenant>', 'the tenant the key belongs to')
    .argument('<operation>', 'the operation name with its version, like orders.create@1')
    .argument('<key>', KEY_DESCRIPTION, keyArgument)
    .option('--show-body', 'also print the stored response body (it may hold personal data)')
    .action((tenant: string, operation: string, key: string, flags: InspectFlags, command: Command) =>
      source(command, flags, async ({ operators }) => {
        const identity = { tenant, operation, key };
        // The console's read: what an operator sees is the same in both.
        const details = await operators.operation(identity, { body: flags.showBody === true });
        if (details === undefined) throw new CommandFailure(`no operation ${identityLabel(identity)}.`);
        const view = describe(details);
        output(flags, view, formatView(view));
      }),
    );
}

/** The record as printed: dates as ISO strings, the body only when it was read. */
function describe(details: OperationView) {
  return {
    ...details.identity,
    state: details.state,
    mode: details.mode,
    createdAt: details.createdAt.toISOString(),
    finishedAt: details.finishedAt?.toISOString(),
    attempt: details.attempt,
    fencingToken: details.fencingToken,
    leaseOwner: details.leaseOwner,
    leaseExpiresAt: details.leaseExpiresAt?.toISOString(),
    failures: details.failures,
    nextAttemptAt: details.notBefore?.toISOString(),
    lastError: details.lastError,
    fingerprint: details.fingerprint,
    status: details.status,
    headers: details.headers,
    resource: details.resource,
    reason: details.reason,
    responseOmitted: details.responseOmitted,
    bodyBytes: details.bodyBytes,
    responseExpiresAt: details.responseExpiresAt?.toISOString(),
    expiresAt: details.expiresAt?.toISOString(),
    steps: details.steps.map((step) => ({
      name: step.name,
      startedAt: step.startedAt.toISOString(),
      finishedAt: step.finishedAt?.toISOString(),
      fencingToken: step.fencingToken,
      downstreamKey: step.downstreamKey,
    })),
    body: details.body === undefined ? undefined : bodyText(details.body),
  };
}

/** UTF-8 text when the bytes are text, base64 otherwise. */
function bodyText(body: Uint8Array): { readonly encoding: 'utf8' | 'base64'; readonly text: string } {
  try {
    return { encoding: 'utf8', text: new TextDecoder('utf-8', { fatal: true }).decode(body) };
  } catch {
    return { encoding: 'base64', text: Buffer.from(body).toString('base64') };
  }
}

type InspectView = ReturnType<typeof describe>;

function formatView(view: InspectView): string {
  const { steps, body, ...fields } = view;
  const lines = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  lines.push(
    `steps: ${steps.map((step) => (step.finishedAt === undefined ? `${step.name} (started, unfinished)` : step.name)).join(', ') || '(none)'}`,
    // What to look the step's call up by in the provider's records.
    ...steps.map((step) => `  ${step.name}: downstream key ${step.downstreamKey}`),
  );
  if (body !== undefined) lines.push(`body (${body.encoding}):`, body.text);
  return lines.join('\n');
}
