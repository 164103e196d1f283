/**
 * What a CLI command can fail with: a sentence for the user, printed without a stack trace, and exit
 * code 1. Anything else that escapes a command is reported the same way (main.ts), never as a stack.
 */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}
