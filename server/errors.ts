/** An answer other than success: a 4xx (or 5xx) status and the one line the client prints. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** Any text as one line (the CLI's rule): a 4xx body is printed by the CLI as it is. */
export { oneLine } from '../src/base/text.ts';
