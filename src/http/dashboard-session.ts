/**
 * The names the dashboard's browser app and the server must agree on. No imports: the
 * browser bundle imports this file, and must pull in nothing of the server with it.
 */

/** The HttpOnly cookie holding a dashboard session (`tribes_ses_` and 40 letters and digits). */
export const DASHBOARD_SESSION_COOKIE = 'tribes_session';

/**
 * Every cookie-authenticated request other than GET and HEAD must carry this header with
 * DASHBOARD_CSRF_VALUE (and an Origin of the server's own): a page on another site can make
 * a browser send the cookie, but cannot set a custom header without a CORS preflight, which
 * the creator API never grants with credentials.
 */
export const DASHBOARD_CSRF_HEADER = 'X-Tribes-CSRF';
export const DASHBOARD_CSRF_VALUE = '1';

/** Where a sign-in link lands the browser once its session is set. */
export const DASHBOARD_HOME_PATH = '/dashboard/';
