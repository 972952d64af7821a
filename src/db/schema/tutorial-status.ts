/** Table of migration 0152: each user's tutorial status ('started' or 'finished'). */
export interface TutorialStatusTable {
  user_id: number;
  status: string;
}

export interface TutorialStatusTables {
  tutorial_status: TutorialStatusTable;
}
