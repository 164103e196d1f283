import { Option, type Command } from 'commander';
import { projectQuery } from './client.js';
import { CliError } from './errors.js';
import { FORMATS, render, rowsOf, type Format } from './format.js';
import type { Context } from './context.js';

type PromptVersion = {
  name: string;
  version: number;
  type: 'text' | 'chat';
  prompt: string | { role: string; content: string }[];
  labels: string[];
};

const GLOBAL_VALUE_OPTIONS = new Set(['--api', '--web', '--key', '--project']);

/**
 * The arguments with `--version` after a `prompts` command read as `--prompt-version`: commander gives
 * the program's `--version` (print the version) every `--version` on the line, wherever it stands.
 */
export function promptVersionArgs(args: string[]): string[] {
  const command = args.findIndex((a, i) => !a.startsWith('-') && !GLOBAL_VALUE_OPTIONS.has(args[i - 1] ?? ''));
  if (command < 0 || args[command] !== 'prompts') return args;
  return args.map((a, i) =>
    i <= command ? a : a === '--version' ? '--prompt-version' : a.replace(/^--version=/, '--prompt-version='),
  );
}

/** A prompt as a script wants it: a text prompt's string as it is; a chat prompt's messages as JSON lines. */
export function promptText(answer: PromptVersion): string {
  return typeof answer.prompt === 'string' ? answer.prompt : answer.prompt.map((m) => JSON.stringify(m)).join('\n');
}

/**
 * `sightline prompts get NAME [--label L | --version N]` and `sightline prompts list` (docs/prompts.md,
 * "From code"). Names with `/` (folders) are sent URL-encoded.
 */
export function registerPromptCommands(program: Command, ctx: Context): void {
  const prompts = program.command('prompts').description('fetch and list prompts');
  prompts
    .command('get')
    .description('print a prompt version: by label, by number, or (neither) production, else the newest')
    .argument('<name>', 'the prompt name (folders with /)')
    .option('--label <label>', 'the version with this label (latest: the newest)')
    .usage('<name> [--label <label> | --version <number>] [--format text|json]')
    // `--version` is the program's (print the version) wherever it stands: main() renames it after `prompts`.
    .addOption(new Option('--prompt-version <number>', 'this version number (also --version)'))
    .addOption(
      new Option('--format <format>', 'output: text (the prompt) or json (the version)')
        .choices(['text', 'json'])
        .default('text'),
    )
    .action(async (name: string, options: { label?: string; promptVersion?: string; format: 'text' | 'json' }) => {
      const o = { ...options, version: options.promptVersion };
      if (o.label !== undefined && o.version !== undefined) throw new CliError('give --label or --version, not both');
      if (o.version !== undefined && !/^[1-9]\d*$/.test(o.version))
        throw new CliError(`--version takes a version number; got '${o.version}'`);
      const api = ctx.api();
      const answer = (await api.call('GET', `/prompts/${encodeURIComponent(name)}`, {
        query: { ...(await projectQuery(api, ctx.globals(), ctx.io.env)), label: o.label, version: o.version },
      })) as PromptVersion;
      ctx.io.out(o.format === 'json' ? JSON.stringify(answer, null, 2) : promptText(answer));
    });
  prompts
    .command('list')
    .description("the project's prompts with their newest version and labels")
    .addOption(
      new Option('--format <format>', 'output: table, csv or json').choices(FORMATS as string[]).default('table'),
    )
    .action(async (o: { format: Format }) => {
      const api = ctx.api();
      const answer = (await api.call('GET', '/prompts', {
        query: { ...(await projectQuery(api, ctx.globals(), ctx.io.env)), limit: 200 },
      })) as { data: Record<string, unknown>[] };
      const keys = ['name', 'type', 'latest_version', 'labels', 'updated_at'];
      ctx.io.out(render(o.format, keys, rowsOf(answer.data, keys), answer));
    });
}
