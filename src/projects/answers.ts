import { z } from 'zod';
import { Role } from '../workspaces/answers.js';
import { all, Count, DateTime } from '../answer-schemas.js';

/** The answers of the project routes (docs/concepts.md, "Workspaces and projects"). */

/** 201 when created, 200 when a project of that name already was (the matched one). */
export const ProjectCreatedAnswer = z
  .object({
    created: z.boolean(),
    id: z.string(),
    name: z.string(),
    workspace_id: z.string(),
  })
  .meta({ id: 'ProjectCreated' });

export const ProjectListAnswer = all(
  z.object({ id: z.string(), name: z.string(), workspace_id: z.string(), workspace_name: z.string() }),
).meta({ id: 'ProjectList' });

export const ProjectDetailAnswer = z
  .object({
    id: z.string(),
    name: z.string(),
    workspace_id: z.string(),
    workspace_name: z.string(),
    trace_ttl_days: Count,
    created_at: DateTime,
    role: Role.describe("the caller's role in the project's workspace"),
  })
  .meta({ id: 'ProjectDetail' });

export const ProjectDeletedAnswer = z
  .object({
    deleted: z.boolean(),
    project: z.object({ id: z.string(), name: z.string() }),
    reason: z.string(),
  })
  .meta({ id: 'ProjectDeleted' });
