import { registerApplier } from './registry.js';

// How a client folds settings, alert-word and typing events into its registered state.

registerApplier('user_settings', (state, event) => {
  if (event.op !== 'update') throw new Error(`user_settings op ${event.op}`);
  if (state.user_settings) state.user_settings[event.property] = event.value;
});

// Legacy clients keep the settings at the top level of their state.
registerApplier('update_display_settings', (state, event) => {
  if (event.setting_name in state) state[event.setting_name] = event.setting;
});
registerApplier('update_global_notifications', (state, event) => {
  if (event.notification_name in state) state[event.notification_name] = event.setting;
});

registerApplier('realm_user_settings_defaults', (state, event) => {
  if (event.op !== 'update') throw new Error(`realm_user_settings_defaults op ${event.op}`);
  if (state.realm_user_settings_defaults) state.realm_user_settings_defaults[event.property] = event.value;
});

registerApplier('alert_words', (state, event) => {
  if ('alert_words' in state) state.alert_words = [...event.alert_words];
});

// Typing notifications are transient: nothing in the registered state changes.
registerApplier('typing', () => undefined);
