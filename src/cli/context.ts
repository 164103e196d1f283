import type { Api } from './client.js';
import type { Env, GlobalOptions } from './settings.js';

/** What every command is handed (main.ts builds it): the terminal, the global options, the API. */
export type Io = { out: (text: string) => void; err: (text: string) => void; env: Env; stdin: NodeJS.ReadStream };

export type Context = { io: Io; globals: () => GlobalOptions; api: (need?: 'any' | 'session' | 'api-key') => Api };
