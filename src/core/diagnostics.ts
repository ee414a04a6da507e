import { channel, type Channel } from 'node:diagnostics_channel';
import type { Observer, RetrysafeEvent } from './events.js';

/** The prefix of retrysafe's `node:diagnostics_channel` names: one channel per event type, `retrysafe:claimed`, `retrysafe:replayed`, … */
export const DIAGNOSTICS_PREFIX = 'retrysafe:';

const channels = new Map<RetrysafeEvent['type'], Channel>();

/** The channel that carries events of one type. */
export function diagnosticsChannel(type: RetrysafeEvent['type']): Channel {
  let found = channels.get(type);
  if (found === undefined) {
    found = channel(`${DIAGNOSTICS_PREFIX}${type}`);
    channels.set(type, found);
  }
  return found;
}

/**
 * Publishes every event on its `node:diagnostics_channel`, for tools that
 * subscribe without being configured as observers. Costs one lookup when
 * nobody listens. The message is the event itself, identity included:
 * a subscriber is in the process, like an observer, and must not export
 * the tenant or the key blindly.
 */
export const publishDiagnostics: Observer = function publishDiagnostics(event) {
  const target = diagnosticsChannel(event.type);
  if (target.hasSubscribers) target.publish(event);
};
