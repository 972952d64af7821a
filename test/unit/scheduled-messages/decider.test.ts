import t from 'tap';
import { ApiError } from '../../../src/domain/errors.js';
import { decideScheduledMessage, deliveryPrecheck, LATE_CUTOFF_SECONDS, type ScheduledMessageState } from '../../../src/domain/scheduled-messages/decider.js';
import type { ScheduledMessageData } from '../../../src/domain/scheduled-messages/events.js';

const NOW = 1_800_000_000;
const message: ScheduledMessageData = {
  id: 7, realm_id: 1, sender_id: 10, type: 'private', stream_id: null, to: [11], topic: '', content: 'hi', rendered_content: '<p>hi</p>',
  scheduled_timestamp: NOW + 60, read_by_sender: true, client: 'website',
};
const waiting: ScheduledMessageState = { ...message, failed: false, delivered: false };

function rejects(t: { ok(value: unknown, message: string): unknown }, fn: () => unknown, msg: string, status = 400): void {
  try {
    fn();
    t.ok(false, `${msg}: no error`);
  } catch (error) {
    t.ok(error instanceof ApiError && error.message === msg && error.status === status, msg);
  }
}

t.test('schedule: only in the future, within a real date', async (t) => {
  t.same(decideScheduledMessage({ type: 'ScheduleMessage', message, now: NOW }, null), [{ type: 'ScheduledMessageCreated', data: { scheduled_message: message } }]);
  rejects(t, () => decideScheduledMessage({ type: 'ScheduleMessage', message: { ...message, scheduled_timestamp: NOW }, now: NOW }, null), 'Scheduled delivery time must be in the future.');
  rejects(t, () => decideScheduledMessage({ type: 'ScheduleMessage', message: { ...message, scheduled_timestamp: 253_402_300_800 }, now: NOW }, null), 'Invalid scheduled_delivery_timestamp');
});

t.test('edit: own, not sent, and a failed one needs a new time', async (t) => {
  const edit = (state: ScheduledMessageState, actor = 10, new_timestamp = false, m = message) =>
    decideScheduledMessage({ type: 'EditScheduledMessage', actor_id: actor, message: m, new_timestamp, now: NOW }, state);
  t.match(edit(waiting), [{ type: 'ScheduledMessageEdited' }]);
  rejects(t, () => edit(waiting, 11), 'Scheduled message does not exist', 404);
  rejects(t, () => edit(null), 'Scheduled message does not exist', 404);
  rejects(t, () => edit({ ...waiting, delivered: true }), 'Scheduled message was already sent');
  rejects(t, () => edit({ ...waiting, failed: true }), 'Scheduled delivery time must be in the future.');
  t.match(edit({ ...waiting, failed: true }, 10, true), [{ type: 'ScheduledMessageEdited' }]);
  rejects(t, () => edit(waiting, 10, true, { ...message, scheduled_timestamp: NOW - 1 }), 'Scheduled delivery time must be in the future.');
});

t.test('delivery: only when due and waiting; a second attempt decides nothing', async (t) => {
  const deliver = (state: ScheduledMessageState, now: number) => decideScheduledMessage({ type: 'DeliverScheduledMessage', now, message_id: 99 }, state);
  t.same(deliver(waiting, NOW + 59), [], 'not yet due');
  t.same(deliver(waiting, NOW + 60), [{ type: 'ScheduledMessageDelivered', data: { sender_id: 10, scheduled_message_id: 7, message_id: 99 } }]);
  t.same(deliver({ ...waiting, delivered: true }, NOW + 60), [], 'already delivered');
  t.same(deliver({ ...waiting, failed: true }, NOW + 60), [], 'failed ones wait for an edit');
  t.same(deliver(null, NOW + 60), [], 'deleted meanwhile');
  t.same(
    decideScheduledMessage({ type: 'FailScheduledMessage', now: NOW + 60, failure_message: 'nope', notify: true }, waiting),
    [{ type: 'ScheduledMessageFailed', data: { scheduled_message: message, failure_message: 'nope', notify: true } }],
  );
});

t.test('precheck: deactivated sender, late cutoff of ten minutes', async (t) => {
  t.same(deliveryPrecheck(waiting!, NOW + 60, false), { failure_message: 'Account is deactivated', notify: false });
  t.equal(deliveryPrecheck(waiting!, NOW + 60 + LATE_CUTOFF_SECONDS, true), null, 'exactly ten minutes late is still sent');
  t.same(deliveryPrecheck(waiting!, NOW + 61 + LATE_CUTOFF_SECONDS, true), { failure_message: 'Message could not be sent at the scheduled time.', notify: true });
});
