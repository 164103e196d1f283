import { z } from 'zod';
import { all, Count } from '../answer-schemas.js';
import { ROLES } from '../auth/roles.js';

/** The answers of the workspace routes (docs/concepts.md, "Workspaces and projects"). */

/** A member's role in a workspace (src/auth/roles.ts), shared by every answer that names one. */
export const Role = z.enum(ROLES).meta({ id: 'Role' });

export const WorkspaceAnswer = z.object({ id: z.string(), name: z.string() }).meta({ id: 'Workspace' });

export const WorkspaceListAnswer = all(WorkspaceAnswer.extend({ role: Role })).meta({ id: 'WorkspaceList' });

export const MemberAnswer = z
  .object({ user_id: z.string(), email: z.string(), name: z.string(), role: Role })
  .meta({ id: 'Member' });

export const MemberListAnswer = all(MemberAnswer).meta({ id: 'MemberList' });

export const MemberRemovedAnswer = z
  .object({ deleted: z.boolean(), workspace_id: z.string(), user_id: z.string() })
  .meta({ id: 'MemberRemoved' });

export const WorkspaceDeletedAnswer = z
  .object({
    deleted: z.boolean(),
    reason: z.string(),
    workspace: WorkspaceAnswer,
    cascaded: z.record(z.string(), Count).describe('what the cascade removed, counted by kind'),
  })
  .meta({ id: 'WorkspaceDeleted' });
