import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, userOf } from '../auth/principal.js';
import { ROLES } from '../auth/roles.js';
import { DeleteReason } from '../edge-schemas.js';
import {
  addMember,
  changeMemberRole,
  createWorkspace,
  deleteWorkspace,
  listMembers,
  listWorkspaces,
  MAX_MEMBERS_PER_WORKSPACE,
  MAX_WORKSPACES_PER_USER,
  removeMember,
} from './service.js';
import {
  MemberAnswer,
  MemberListAnswer,
  MemberRemovedAnswer,
  WorkspaceAnswer,
  WorkspaceDeletedAnswer,
  WorkspaceListAnswer,
} from './answers.js';

const WorkspaceParams = z.object({ workspace_id: z.string().min(1) });
const MemberParams = WorkspaceParams.extend({ user_id: z.string().min(1) });
const role = z.enum(ROLES);

export function registerWorkspaceRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const user = { onRequest: authenticate(ctx, 'user') };

  r.get('/workspaces', { ...user, schema: { response: { 200: WorkspaceListAnswer } } }, async (request) =>
    listWorkspaces(ctx, userOf(request)),
  );

  const createDescription = `Creates a workspace with the caller as ADMIN; 409 when the caller already created ${MAX_WORKSPACES_PER_USER} (workspaces others added them to don't count).`;
  r.post(
    '/workspaces',
    {
      ...user,
      config: { idempotent: true },
      schema: {
        description: createDescription,
        body: z.object({ name: z.string().trim().min(1).max(200) }),
        response: { 201: WorkspaceAnswer },
      },
    },
    async (request, reply) => reply.status(201).send(await createWorkspace(ctx, userOf(request), request.body.name)),
  );

  r.delete(
    '/workspaces/:workspace_id',
    {
      ...user,
      schema: {
        params: WorkspaceParams,
        querystring: z.object({ name: z.string(), reason: DeleteReason }),
        response: { 200: WorkspaceDeletedAnswer },
      },
    },
    async (request) => deleteWorkspace(ctx, userOf(request), request.params.workspace_id, request.query),
  );

  r.get(
    '/workspaces/:workspace_id/members',
    { ...user, schema: { params: WorkspaceParams, response: { 200: MemberListAnswer } } },
    async (request) => listMembers(ctx, userOf(request), request.params.workspace_id),
  );

  r.post(
    '/workspaces/:workspace_id/members',
    {
      ...user,
      config: { idempotent: true },
      schema: {
        description: `Adds an existing user (ADMIN); 404 unknown e-mail; 409 when they already belong to ${MAX_WORKSPACES_PER_USER} workspaces (they can leave one) or the workspace holds ${MAX_MEMBERS_PER_WORKSPACE} members.`,
        params: WorkspaceParams,
        body: z.object({ email: z.string().trim().min(1).max(320), role }),
        response: { 201: MemberAnswer },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await addMember(ctx, userOf(request), request.params.workspace_id, request.body)),
  );

  r.patch(
    '/workspaces/:workspace_id/members/:user_id',
    { ...user, schema: { params: MemberParams, body: z.object({ role }), response: { 200: MemberAnswer } } },
    async (request) =>
      changeMemberRole(ctx, userOf(request), request.params.workspace_id, request.params.user_id, request.body.role),
  );

  r.delete(
    '/workspaces/:workspace_id/members/:user_id',
    {
      ...user,
      schema: {
        description:
          'Removes a member (ADMIN), or leaves the workspace: any member may remove their own user_id. ' +
          'The last ADMIN can neither be removed nor leave (409).',
        params: MemberParams,
        response: { 200: MemberRemovedAnswer },
      },
    },
    async (request) => removeMember(ctx, userOf(request), request.params.workspace_id, request.params.user_id),
  );
}
