/**
 * Operator password reset (docs/authentication.md, "Passwords and sessions"):
 *
 *   npm run reset-password -- user@example.com           # prints a new random password
 *   SIGHTLINE_NEW_PASSWORD=... npm run reset-password -- user@example.com
 *
 * Runs against the database the server uses (DATABASE_URL, or the embedded one under DATA_DIR: stop
 * the server first, an embedded database opens in one process at a time). Ends every session of the
 * user. Whoever can run this can read the database anyway, so it grants nothing new; no HTTP route
 * resets another user's password.
 */
import crypto from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { openPostgres } from '../src/stores/postgres.js';
import { resetPassword } from '../src/accounts/password.js';

async function main(): Promise<void> {
  const email = process.argv[2];
  if (!email) throw new Error('usage: npm run reset-password -- <email>');
  const given = process.env.SIGHTLINE_NEW_PASSWORD;
  if (given !== undefined && given.length < 8) throw new Error('SIGHTLINE_NEW_PASSWORD must be at least 8 characters');
  const password = given ?? crypto.randomBytes(12).toString('base64url');
  const pg = await openPostgres(loadConfig());
  try {
    const result = await resetPassword(pg, email, password);
    console.log(`password of ${email} reset; ${result.revoked_sessions} session(s) ended`);
    if (given === undefined) console.log(`new password: ${password}`);
  } finally {
    await pg.close();
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error.message);
    process.exit(1);
  },
);
