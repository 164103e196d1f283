/** Workspace roles, lowest first (docs/authentication.md, "Roles"). "MEMBER or higher" means MEMBER or ADMIN. */
export const ROLES = ['VIEWER', 'MEMBER', 'ADMIN'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { VIEWER: 1, MEMBER: 2, ADMIN: 3 };

export function hasRole(actual: Role, required: Role): boolean {
  return RANK[actual] >= RANK[required];
}

export function roleRefusal(required: Role): string {
  return required === 'ADMIN'
    ? 'this operation requires the ADMIN role in the workspace'
    : `this operation requires the ${required} role or higher in the workspace`;
}
