import { ApiError, errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { ScheduledMessageData, ScheduledMessageEvent } from './events.js';

/** The real server gives up on a scheduled message this long after its time (then it fails). */
export const LATE_CUTOFF_SECONDS = 10 * 60;
/** The last second a datetime can hold on the real server (9999-12-31T23:59:59Z). */
export const MAX_DELIVERY_TIMESTAMP = 253_402_300_799;

/** A scheduled message and where it stands; null when there is none with that id. */
export type ScheduledMessageState = (ScheduledMessageData & { failed: boolean; delivered: boolean }) | null;

export type ScheduledMessageCommand =
  | { type: 'ScheduleMessage'; message: ScheduledMessageData; now: number }
  | { type: 'EditScheduledMessage'; actor_id: number; message: ScheduledMessageData; new_timestamp: boolean; now: number }
  | { type: 'DeleteScheduledMessage'; actor_id: number; scheduled_message_id: number }
  | { type: 'DeliverScheduledMessage'; now: number; message_id: number }
  | { type: 'FailScheduledMessage'; now: number; failure_message: string; notify: boolean };

export const scheduledMessageDoesNotExist = () => new ApiError('BAD_REQUEST', 404, 'Scheduled message does not exist');
export const alreadySent = () => errors.badRequest('Scheduled message was already sent');
const notInFuture = () => errors.badRequest('Scheduled delivery time must be in the future.');

/** POST and PATCH: the delivery time must be a real time after now. */
export function checkDeliveryTime(timestamp: number, now: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp > MAX_DELIVERY_TIMESTAMP || timestamp < -MAX_DELIVERY_TIMESTAMP) {
    throw errors.badRequest('Invalid scheduled_delivery_timestamp');
  }
  if (timestamp <= now) throw notInFuture();
}

/** The scheduled message the actor may change: their own, not yet sent. */
export function checkEditable(state: ScheduledMessageState, actorId: number, newTimestamp: boolean): NonNullable<ScheduledMessageState> {
  if (!state || state.sender_id !== actorId) throw scheduledMessageDoesNotExist();
  if (state.delivered) throw alreadySent();
  // A failed message is only sent again at a new time.
  if (state.failed && !newTimestamp) throw notInFuture();
  return state;
}

/**
 * Why a due message cannot be sent before even trying the send path, or null. The send path's own
 * checks (channel access, recipients, content) come after this.
 */
export function deliveryPrecheck(
  state: NonNullable<ScheduledMessageState>,
  now: number,
  senderActive: boolean,
  realmActive = true,
): { failure_message: string; notify: boolean } | null {
  if (!realmActive) return { failure_message: 'This organization has been deactivated', notify: false };
  if (!senderActive) return { failure_message: 'Account is deactivated', notify: false };
  if (now > state.scheduled_timestamp + LATE_CUTOFF_SECONDS) return { failure_message: 'Message could not be sent at the scheduled time.', notify: true };
  return null;
}

/** Due for delivery: not sent, not failed, its time has come. */
export const isDue = (state: ScheduledMessageState, now: number): state is NonNullable<ScheduledMessageState> =>
  state !== null && !state.delivered && !state.failed && state.scheduled_timestamp <= now;

const dataOf = (state: NonNullable<ScheduledMessageState>): ScheduledMessageData => {
  const { failed: _failed, delivered: _delivered, ...data } = state;
  return data;
};

/** Pure: a command on one scheduled message gives the events to record, or a catalog error. */
export function decideScheduledMessage(command: ScheduledMessageCommand, state: ScheduledMessageState): ScheduledMessageEvent[] {
  switch (command.type) {
    case 'ScheduleMessage':
      if (state) throw new Error(`scheduled message ${command.message.id} exists`);
      checkDeliveryTime(command.message.scheduled_timestamp, command.now);
      return [{ type: 'ScheduledMessageCreated', data: { scheduled_message: command.message } }];
    case 'EditScheduledMessage': {
      const current = checkEditable(state, command.actor_id, command.new_timestamp);
      if (command.message.id !== current.id || command.message.sender_id !== current.sender_id) throw new Error('edit of another message');
      if (command.new_timestamp) checkDeliveryTime(command.message.scheduled_timestamp, command.now);
      return [{ type: 'ScheduledMessageEdited', data: { scheduled_message: command.message } }];
    }
    case 'DeleteScheduledMessage':
      if (!state || state.sender_id !== command.actor_id) throw scheduledMessageDoesNotExist();
      return [{ type: 'ScheduledMessageDeleted', data: { sender_id: state.sender_id, scheduled_message_id: state.id } }];
    case 'DeliverScheduledMessage':
      // Another process delivered it, it was edited to a later time, or deleted: nothing to do.
      if (!isDue(state, command.now)) return [];
      return [{ type: 'ScheduledMessageDelivered', data: { sender_id: state.sender_id, scheduled_message_id: state.id, message_id: command.message_id } }];
    case 'FailScheduledMessage':
      if (!isDue(state, command.now)) return [];
      return [{
        type: 'ScheduledMessageFailed',
        data: { scheduled_message: dataOf(state), failure_message: command.failure_message, notify: command.notify },
      }];
    default:
      return assertNever(command);
  }
}
