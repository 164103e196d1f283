import { z } from 'zod';
import { all, DateTime } from '../answer-schemas.js';

/** The answers of the API key routes (docs/authentication.md, "Project API keys"). */

const KeyFields = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string(),
  created_at: DateTime,
  expires_at: DateTime.nullable(),
});

/** `key` appears only in the create answer. */
export const ApiKeyCreatedAnswer = KeyFields.extend({ key: z.string() }).meta({ id: 'ApiKeyCreated' });

export const ApiKeyListAnswer = all(KeyFields.extend({ last_used_at: DateTime.nullable() })).meta({ id: 'ApiKeyList' });

export const ApiKeyRevokedAnswer = z
  .object({ deleted: z.boolean(), id: z.string(), name: z.string() })
  .meta({ id: 'ApiKeyRevoked' });

export const WhoamiAnswer = z
  .object({
    project_id: z.string(),
    project_name: z.string(),
    workspace_id: z.string(),
    key_id: z.string(),
  })
  .meta({ id: 'Whoami' });
