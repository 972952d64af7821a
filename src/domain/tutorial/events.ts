import type { Event } from '../event-types.js';

/** The web app's old tutorial: 'started' or 'finished' (POST /users/me/tutorial_status). */
export type TutorialStatusChanged = Event<'TutorialStatusChanged', { user_id: number; status: 'started' | 'finished' }>;

export type TutorialEvent = TutorialStatusChanged;
