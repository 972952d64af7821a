/**
 * The one error catalog: every failure a client can see is an ApiError with a Zulip code, an HTTP
 * status and a message. Handlers throw these; the HTTP error handler renders the envelope.
 */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const errors = {
  badRequest: (msg: string, extra?: Record<string, unknown>) => new ApiError('BAD_REQUEST', 400, msg, extra),
  /** Our extension: the real server has no erased state (its do_delete_user leaves a deactivated placeholder). */
  userErased: () => new ApiError('BAD_REQUEST', 400, 'This user has been erased.'),
  unauthorized: () =>
    new ApiError('UNAUTHORIZED', 401, 'Not logged in: API authentication or user session required', {}, {
      'WWW-Authenticate': 'Basic realm="zulip"',
    }),
  /**
   * The same refusal on the web app's /json surface, which asks for a session (the real server's
   * json_unauthorized(www_authenticate='session')). This server has no sessions: a /json request is a
   * spectator's, and this is the answer wherever spectators are not admitted.
   */
  notLoggedInSession: () =>
    new ApiError('UNAUTHORIZED', 401, 'Not logged in: API authentication or user session required', {}, {
      'WWW-Authenticate': 'Session realm="zulip"',
    }),
  /** No organization answers at this address (the real server's InvalidSubdomainError). */
  invalidSubdomain: () => new ApiError('NONEXISTENT_SUBDOMAIN', 404, 'Invalid subdomain'),
  invalidApiKey: () => new ApiError('INVALID_API_KEY', 401, 'Invalid API key', {}, { 'WWW-Authenticate': 'Basic realm="zulip"' }),
  userDeactivated: () => new ApiError('USER_DEACTIVATED', 401, 'Account is deactivated'),
  realmDeactivated: () => new ApiError('REALM_DEACTIVATED', 401, 'This organization has been deactivated'),
  authFailed: () => new ApiError('AUTHENTICATION_FAILED', 401, 'Your username or password is incorrect'),
  missingArgument: (name: string) =>
    new ApiError('REQUEST_VARIABLE_MISSING', 400, `Missing '${name}' argument`, { var_name: name }),
  /** A JsonableError on the real server (request.py), so BAD_REQUEST: INVALID_JSON is its body-payload "Malformed JSON". */
  invalidJson: (name: string) => new ApiError('BAD_REQUEST', 400, `Argument "${name}" is not valid JSON.`),
  invalidArgument: (name: string, problem: string) => new ApiError('BAD_REQUEST', 400, `${name} ${problem}`),
  notFound: () => new ApiError('NOT_FOUND', 404, 'Endpoint not found'),
  /**
   * The real server's json_method_not_allowed (zerver/lib/response.py): the path's methods in the body and
   * in `Allow`. It sends no `code`; SPEC.md gives every error one, so ours has the default BAD_REQUEST.
   */
  methodNotAllowed: (allowed: readonly string[]) =>
    new ApiError('BAD_REQUEST', 405, 'Method Not Allowed', { allowed_methods: [...allowed] }, { Allow: allowed.join(', ') }),
  rateLimited: (retryAfter: number) =>
    new ApiError('RATE_LIMIT_HIT', 429, 'API usage exceeded rate limit', { 'retry-after': retryAfter }, {
      'Retry-After': String(Math.ceil(retryAfter)),
    }),
  unauthorizedPrincipal: (msg = 'Must be an organization administrator') =>
    new ApiError('UNAUTHORIZED_PRINCIPAL', 400, msg),
  mustBeAdmin: () => new ApiError('UNAUTHORIZED_PRINCIPAL', 400, 'Must be an organization administrator'),
  mustBeOwner: () => new ApiError('UNAUTHORIZED_PRINCIPAL', 400, 'Must be an organization owner'),
  noSuchUser: () => new ApiError('BAD_REQUEST', 400, 'No such user'),
  badEventQueue: (queueId: string) =>
    new ApiError('BAD_EVENT_QUEUE_ID', 400, `Bad event queue ID: ${queueId}`, { queue_id: queueId }),
  serviceUnavailable: () => new ApiError('SERVICE_UNAVAILABLE', 503, 'Service temporarily unavailable, try again'),
  conflict: () => new ApiError('BAD_REQUEST', 409, 'Concurrent change; please retry'),
  invalidChannelId: () => new ApiError('BAD_REQUEST', 400, 'Invalid channel ID'),
  streamDoesNotExist: (name: string) => new ApiError('STREAM_DOES_NOT_EXIST', 400, `Channel '${name}' does not exist`, { stream: name }),
};
