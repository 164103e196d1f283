import { z } from 'zod';
import { all, Count } from '../answer-schemas.js';
import { ROLES } from '../auth/roles.js';

/** The answers of the workspace routes (docs/concepts.md, "Workspaces and projects"). */

const Role = z.enum(ROLES);

export const WorkspaceAnswer = z.object({ id: z.string(), name: z.string() });

export const WorkspaceListAnswer = all(WorkspaceAnswer.extend({ role: Role }));

export const MemberAnswer = z.object({ user_id: z.string(), email: z.string(), name: z.string(), role: Role });

export const MemberListAnswer = all(MemberAnswer);

export const MemberRemovedAnswer = z.object({ deleted: z.boolean(), workspace_id: z.string(), user_id: z.string() });

export const WorkspaceDeletedAnswer = z.object({
  deleted: z.boolean(),
  reason: z.string(),
  workspace: WorkspaceAnswer,
  cascaded: z.record(z.string(), Count).describe('what the cascade removed, counted by kind'),
});
