import { z } from 'zod';
import { all, Count, DateTime } from '../answer-schemas.js';

/** The answers of the project routes (docs/concepts.md, "Workspaces and projects"). */

/** 201 when created, 200 when a project of that name already was (the matched one). */
export const ProjectCreatedAnswer = z.object({
  created: z.boolean(),
  id: z.string(),
  name: z.string(),
  workspace_id: z.string(),
});

export const ProjectListAnswer = all(
  z.object({ id: z.string(), name: z.string(), workspace_id: z.string(), workspace_name: z.string() }),
);

export const ProjectDetailAnswer = z.object({
  id: z.string(),
  name: z.string(),
  workspace_id: z.string(),
  workspace_name: z.string(),
  trace_ttl_days: Count,
  created_at: DateTime,
  role: z.string().describe("the caller's role in the project's workspace: VIEWER, MEMBER or ADMIN"),
});

export const ProjectDeletedAnswer = z.object({
  deleted: z.boolean(),
  project: z.object({ id: z.string(), name: z.string() }),
  reason: z.string(),
});
