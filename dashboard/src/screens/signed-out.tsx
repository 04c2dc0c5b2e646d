/** What a visitor without a live session sees: how to get a sign-in link (no password here). */
export function SignedOut() {
  return (
    <main id="main" class="signed-out" tabIndex={-1}>
      <h1>Sign in to Tribes</h1>
      <p>You are not signed in, or your session ended (after 12 hours without use, or when it was revoked).</p>
      <p>The dashboard opens from a one-time sign-in link. Get a new one in either of these ways:</p>
      <ul>
        <li>
          From the operator: <code>npm run cli -- creators login-link --email you@example.com</code>
        </li>
        <li>
          With your API key: <code>POST /api/v1/dashboard/login-links</code>
        </li>
      </ul>
    </main>
  );
}
