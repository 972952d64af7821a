export const Role = { OWNER: 100, ADMINISTRATOR: 200, MODERATOR: 300, MEMBER: 400, GUEST: 600 } as const;
export type RoleValue = (typeof Role)[keyof typeof Role];
export const ALL_ROLES: readonly number[] = Object.values(Role);

export const isAdminRole = (role: number) => role <= Role.ADMINISTRATOR;
export const isModeratorOrAbove = (role: number) => role <= Role.MODERATOR;

/**
 * System groups, from the narrowest to the widest (each one a subgroup of the next, up to
 * role:internet), and the roles that are direct members of each. role:fullmembers is the exception:
 * members join it once past the waiting period (user-groups/full-members.ts), by events of its own.
 */
export const SYSTEM_GROUPS = [
  { name: 'role:owners', description: 'Owners of this organization', roles: [Role.OWNER] },
  { name: 'role:administrators', description: 'Administrators of this organization, including owners', roles: [Role.ADMINISTRATOR] },
  { name: 'role:moderators', description: 'Moderators of this organization, including administrators', roles: [Role.MODERATOR] },
  { name: 'role:fullmembers', description: 'Members of this organization, not including new accounts and guests', roles: [] },
  { name: 'role:members', description: 'Members of this organization, not including guests', roles: [Role.MEMBER] },
  { name: 'role:everyone', description: 'Everyone in this organization, including guests', roles: [Role.GUEST] },
  { name: 'role:internet', description: 'Everyone on the Internet', roles: [] },
  { name: 'role:nobody', description: 'Nobody', roles: [] },
] as const;

/** The system group a role belongs to directly (wider groups include it through subgroups). */
export function systemGroupForRole(role: number): string {
  switch (role) {
    case Role.OWNER: return 'role:owners';
    case Role.ADMINISTRATOR: return 'role:administrators';
    case Role.MODERATOR: return 'role:moderators';
    case Role.GUEST: return 'role:everyone';
    default: return 'role:members';
  }
}
