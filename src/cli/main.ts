import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { Api, connect, projectQuery } from './client.js';
import { CliError } from './errors.js';
import { FORMATS, render, rowsOf, table, type Format } from './format.js';
import { ingestFile, progressBar } from './ingest.js';
import { browserLogin } from './login.js';
import {
  credentialsPath,
  removeCredentials,
  resolveTarget,
  writeCredentials,
  type Env,
  type GlobalOptions,
} from './settings.js';
import { registerTraceCommands } from './traces.js';
import { promptVersionArgs, registerPromptCommands } from './prompts.js';
import type { Context, Io } from './context.js';

/**
 * `sightline`: the command-line client of a Sightline server (any server: --api/--web or
 * SIGHTLINE_API_URL/SIGHTLINE_WEB_URL). A user logs in through the browser once; project API keys
 * (--key or SIGHTLINE_API_KEY) serve ingest and scripts. Every failure prints one sentence on stderr
 * and exits 1, never a stack trace.
 */

export type { Context, Io } from './context.js';

export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv.slice(0, 2), ...promptVersionArgs(argv.slice(2))]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 1;
    const message =
      error instanceof CliError ? error.message : `unexpected error: ${(error as Error)?.message ?? String(error)}`;
    io.err(`sightline: ${message}`);
    return 1;
  }
}

function defaultIo(): Io {
  return {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
    env: process.env,
    stdin: process.stdin,
  };
}

const formatOption = () =>
  new Option('--format <format>', 'output: table, csv or json').choices(FORMATS as string[]).default('table');

export function buildProgram(io: Io): Command {
  const program = new Command('sightline')
    .description('Sightline from the command line: log in, list traces, run SQL, ingest spans')
    .option(
      '--api <url>',
      'API address (default SIGHTLINE_API_URL, else the logged-in server, else http://localhost:8000)',
    )
    .option(
      '--web <url>',
      'web address (default SIGHTLINE_WEB_URL, else the logged-in server, else http://localhost:3000)',
    )
    .option('--key <api-key>', 'a project API key (default SIGHTLINE_API_KEY)')
    .option('--project <project-id>', 'the project, for commands run with a user login (default SIGHTLINE_PROJECT)')
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({
      writeOut: (t) => io.out(t.trimEnd()),
      writeErr: (t) => io.err(t.trimEnd()),
      outputError: (t, write) => write(usageError(t)),
    })
    // docs/cli.md: a usage error is one line; the help is a flag away.
    .showHelpAfterError(false);
  const globals = () => program.opts<GlobalOptions>();
  const ctx: Context = {
    io,
    globals,
    api: (need = 'any') => connect(resolveTarget(globals(), io.env), globals(), io.env, need),
  };

  program
    .command('login')
    .description(
      `log in through the browser (or --token) and keep the session in ${displayPath(credentialsPath(io.env), io.env)}`,
    )
    .option('--token <session-token>', 'use this session token instead of the browser')
    .option('--no-browser', 'print the login address without opening a browser')
    .option('--timeout <seconds>', 'how long to wait for the browser', '300')
    .action(async (options: { token?: string; browser: boolean; timeout: string }) => {
      const target = resolveTarget(globals(), io.env);
      const token =
        options.token ??
        (await browserLogin(target, {
          openBrowser: options.browser,
          timeoutMs: Number(options.timeout) * 1000,
          print: io.err,
        }));
      const workspaces = (await new Api(target, token, 'session').call('GET', '/workspaces')) as {
        data: { name: string }[];
      };
      const file = writeCredentials(io.env, {
        api_url: target.apiUrl,
        web_url: target.webUrl,
        session_token: token,
        saved_at: new Date().toISOString(),
      });
      io.out(
        `Logged in to ${target.apiUrl} (${workspaces.data.length} workspace${workspaces.data.length === 1 ? '' : 's'}); credentials saved to ${file}`,
      );
    });

  program
    .command('logout')
    .description('end the session on the server and forget it here')
    .action(async () => {
      let api: Api | null = null;
      try {
        api = ctx.api('session');
      } catch {
        // Nothing stored: nothing to end.
      }
      if (api) await api.send(`${api.target.webUrl}/api/auth/logout`, 'POST', {}, (s) => s < 400 || s === 401);
      io.out(removeCredentials(io.env) ? 'Logged out.' : 'Not logged in.');
    });

  program
    .command('whoami')
    .description("who the current credential is: the API key's project, or the login's workspaces")
    .action(async () => {
      const api = ctx.api();
      if (api.credential === 'api-key') {
        const me = (await api.call('GET', '/whoami')) as Record<string, string>;
        io.out(
          `API key ${me.key_id} of project ${me.project_name} (${me.project_id}), workspace ${me.workspace_id} at ${api.target.apiUrl}`,
        );
        return;
      }
      const { data } = (await api.call('GET', '/workspaces')) as { data: { id: string; name: string; role: string }[] };
      const { user } = (await api.web('GET', '/api/auth/session')) as {
        user: { id: string; email: string; name: string };
      };
      io.out(
        `Logged in at ${api.target.apiUrl} as ${user.name} <${user.email}> (user ${user.id})\n${table(['workspace', 'id', 'role'], rowsOf(data, ['name', 'id', 'role']))}`,
      );
    });

  program
    .command('token')
    .description('print a fresh 10-minute access token minted from the session')
    .action(async () => {
      const api = ctx.api('session');
      const { accessToken } = (await api.web('POST', '/api/cli/token')) as { accessToken: string };
      io.out(accessToken);
    });

  program
    .command('projects')
    .description('the projects the login can access')
    .option('--workspace <workspace-id>', "only this workspace's projects")
    .addOption(formatOption())
    .action(async (options: { workspace?: string; format: Format }) => {
      const { data } = (await ctx
        .api('session')
        .call('GET', '/projects', { query: { workspace_id: options.workspace } })) as {
        data: Record<string, unknown>[];
      };
      io.out(
        render(
          options.format,
          ['id', 'name', 'workspace_id', 'workspace_name'],
          rowsOf(data, ['id', 'name', 'workspace_id', 'workspace_name']),
          data,
        ),
      );
    });

  registerTraceCommands(program, ctx, formatOption);

  program
    .command('sql')
    .description("run a SELECT over the project's traces, spans and findings (the query, --file, or standard input)")
    .argument('[query]', 'the SQL; "-" or nothing reads standard input')
    .option('--file <path>', 'read the SQL from a file')
    .addOption(formatOption())
    .action(async (query: string | undefined, options: { file?: string; format: Format }) => {
      const sql = options.file ? readFile(options.file) : query && query !== '-' ? query : await readStdin(io.stdin);
      if (!sql.trim()) throw new CliError('no SQL given: pass it as an argument, with --file, or on standard input');
      const api = ctx.api();
      const answer = (await api.call('POST', '/sql', {
        query: await projectQuery(api, globals(), io.env),
        body: { query: sql },
      })) as {
        columns: { name: string }[];
        rows: unknown[][];
        row_count: number;
        truncated: boolean;
        elapsed_ms: number;
      };
      io.out(
        render(
          options.format,
          answer.columns.map((c) => c.name),
          answer.rows,
          answer,
        ),
      );
      if (options.format === 'table')
        io.err(
          `${answer.row_count} row${answer.row_count === 1 ? '' : 's'}${answer.truncated ? ' (truncated)' : ''} in ${answer.elapsed_ms} ms`,
        );
    });

  registerSignalCommands(program, ctx);
  registerAlertCommands(program, ctx);
  registerPromptCommands(program, ctx);

  program
    .command('ingest')
    .description('send spans from a file (JSON lines of spans, or an OTLP/JSON export) with a project API key')
    .argument('<file>')
    .option('--batch <n>', 'spans per request (at most 10,000)', '1000')
    .option('--attempts <n>', 'tries per batch when the server is busy or unreachable', '8')
    .action(async (file: string, options: { batch: string; attempts: string }) => {
      const batch = Number(options.batch);
      if (!Number.isInteger(batch) || batch < 1 || batch > 10_000)
        throw new CliError('--batch must be an integer from 1 to 10000');
      const started = Date.now();
      const progress = await progressBar(process.stderr);
      let result;
      try {
        result = await ingestFile(ctx.api('api-key'), file, {
          batch,
          maxAttempts: Math.max(1, Number(options.attempts) || 1),
          progress,
        });
      } finally {
        // A failure's one line goes below the bar, not onto its end.
        progress.stop();
      }
      const seconds = (Date.now() - started) / 1000;
      io.err(
        `sent ${result.sent.toLocaleString('en-US')} spans in ${seconds.toFixed(1)} s` +
          (seconds > 0 ? ` (${Math.round(result.sent / seconds).toLocaleString('en-US')} spans/s)` : ''),
      );
      io.out(`${result.accepted} of ${result.sent} spans accepted`);
      for (const r of result.rejected.slice(0, 20))
        io.err(
          `rejected: batch ${r.batch} index ${r.index}${r.span_id ? ` span ${r.span_id}` : ''}: ${r.errors.join('; ')}`,
        );
      for (const s of result.skipped.slice(0, 20)) io.err(`skipped: ${file}:${s.line}: ${s.reason}`);
      if (result.skipped.length > 20) io.err(`skipped: ... and ${result.skipped.length - 20} more lines`);
      const problems = [
        result.rejected.length ? `${result.sent - result.accepted} spans were rejected` : '',
        result.skipped.length
          ? `${result.skipped.length} line${result.skipped.length === 1 ? ' was' : 's were'} not a span and skipped`
          : '',
      ].filter(Boolean);
      if (problems.length) throw new CliError(problems.join('; '));
    });

  return program;
}

function registerSignalCommands(program: Command, ctx: Context): void {
  const signals = program.command('signals').description('list, resolve and reopen signals');
  signals
    .command('list')
    .option('--status <status>', 'open, resolved or dismissed')
    .option('--detector <detector-id>')
    .option('--limit <n>', 'per page', '50')
    .option('--page <n>', '0-based page', '0')
    .addOption(new Option('--format <format>').choices(FORMATS as string[]).default('table'))
    .action(async (o: { status?: string; detector?: string; limit: string; page: string; format: Format }) => {
      const api = ctx.api();
      const query = {
        ...(await projectQuery(api, ctx.globals(), ctx.io.env)),
        status: o.status,
        detector_id: o.detector,
        limit: o.limit,
        page: o.page,
      };
      const answer = (await api.call('GET', '/signals', { query })) as {
        data: Record<string, unknown>[];
        meta: { total: number };
      };
      const keys = ['signal_id', 'status', 'title', 'hit_count', 'last_seen_at'];
      ctx.io.out(render(o.format, keys, rowsOf(answer.data, keys), answer));
    });
  const change =
    (status: 'resolved' | 'open') =>
    async (id: string, o: { reason?: string; note?: string; expectedStatus?: string }) => {
      const api = ctx.api('session');
      const project = (await projectQuery(api, ctx.globals(), ctx.io.env)).project_id;
      const body = { project_id: project, status, reason: o.reason, note: o.note, expected_status: o.expectedStatus };
      const answer = (await api.call('PATCH', `/signals/${encodeURIComponent(id)}/status`, { body })) as {
        updated: boolean;
        signal: { status: string };
      };
      ctx.io.out(
        answer.updated
          ? `signal ${id} is now ${answer.signal.status}`
          : `signal ${id} was already ${answer.signal.status}; nothing changed`,
      );
    };
  signals
    .command('resolve')
    .argument('<signal-id>')
    .requiredOption('--reason <reason>', 'fixed_elsewhere, fixed_by_pr, already_fixed_before or other')
    .option('--note <text>', 'required with --reason other')
    .option('--expected-status <status>', 'refuse (409) if the signal is no longer in this status')
    .action(change('resolved'));
  signals.command('reopen').argument('<signal-id>').option('--expected-status <status>').action(change('open'));
}

function registerAlertCommands(program: Command, ctx: Context): void {
  const alerts = program.command('alerts').description('list, pause and resume alerts');
  alerts
    .command('list')
    .option('--status <status>', 'OK, ALERTING, NO_DATA, ERROR or PAUSED')
    .addOption(new Option('--format <format>').choices(FORMATS as string[]).default('table'))
    .action(async (o: { status?: string; format: Format }) => {
      const api = ctx.api();
      const answer = (await api.call('GET', '/alerts', {
        query: { ...(await projectQuery(api, ctx.globals(), ctx.io.env)), status: o.status },
      })) as { data: Record<string, unknown>[] };
      const keys = [
        'id',
        'name',
        'status',
        'severity',
        'measure',
        'aggregation',
        'threshold_operator',
        'threshold',
        'window',
      ];
      ctx.io.out(render(o.format, keys, rowsOf(answer.data, keys), answer));
    });
  for (const action of ['pause', 'resume'] as const) {
    alerts
      .command(action)
      .argument('<alert-id>')
      .action(async (id: string) => {
        const api = ctx.api('session');
        const project = (await projectQuery(api, ctx.globals(), ctx.io.env)).project_id;
        const answer = (await api.call('POST', `/alerts/${encodeURIComponent(id)}/${action}`, {
          body: { project_id: project },
        })) as { alert?: { status: string }; status?: string };
        ctx.io.out(`alert ${id} is ${answer.alert?.status ?? answer.status ?? action + 'd'}`);
      });
  }
}

/**
 * Commander's error text as the one line docs/cli.md promises: `sightline: <what>; see <command> --help`.
 * Its text reads `error: unknown option '--x'` and may add a second line (`(Did you mean --y?)`).
 */
export function usageError(text: string): string {
  const what = text
    .trim()
    .replace(/^error:\s*/, '')
    .replace(/\s*\n\s*/g, ' ');
  return `sightline: ${what} (see sightline --help)\n`;
}

function packageVersion(): string {
  try {
    const file = fileURLToPath(new URL('../../package.json', import.meta.url));
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The home folder as `~`, so help reads the same on every machine. */
function displayPath(file: string, env: Env): string {
  const home = env.HOME;
  return home && file.startsWith(`${home}/`) ? `~/${file.slice(home.length + 1)}` : file;
}

function readFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(`cannot read ${file}`);
  }
}

async function readStdin(stdin: NodeJS.ReadStream): Promise<string> {
  if (stdin.isTTY) throw new CliError('no SQL given: pass it as an argument, with --file, or on standard input');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
