/**
 * A command line the command refuses: the CLI prints its message as the one line, as it does for node's own
 * argument errors (their code starts the same way).
 */
export class UsageError extends Error {
  readonly code = 'ERR_PARSE_ARGS_COMMAND';
}
