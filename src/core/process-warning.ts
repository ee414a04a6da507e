import type { Observer } from './events.js';

/** The `code` of each of retrysafe's process warnings, to tell them apart in `process.on('warning')`. */
export type WarningCode = 'RETRYSAFE_RAW_BODY_MISSING' | 'RETRYSAFE_POOLER_DETECTED';

/**
 * Raises a Node process warning about a setup that weakens a guarantee or
 * costs speed: Node prints it on standard error unless warnings are turned
 * off, so it is seen even where no observer or logger is configured.
 */
export function warnProcess(code: WarningCode, message: string): void {
  process.emitWarning(`retrysafe: ${message}`, { type: 'RetrysafeWarning', code });
}

/** Every configuration's observer that turns a `raw-body-missing` event into a process warning. */
export const warnRawBodyMissing: Observer = function warnRawBodyMissing(event) {
  if (event.type !== 'raw-body-missing') return;
  warnProcess(
    'RETRYSAFE_RAW_BODY_MISSING',
    `${event.operation} receives JSON bodies without their text, so two numbers that differ only beyond a double's precision share a fingerprint. ` +
      'Keep the text: express.json({ verify: keepRawBody }) with keepRawBody from retrysafe/express, or NestFactory.create(AppModule, { rawBody: true }).',
  );
};
