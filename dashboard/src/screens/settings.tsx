import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';
import { dateTime } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { Show, useLoad } from '../ui/load.js';
import { Badge, Card, Table } from '../ui/parts.js';

type Session = Schemas['DashboardSession'];

/**
 * The credentials of the account: API keys (listed; creating and revoking them needs an API
 * key — a dashboard session cannot mint or revoke credentials, so a stolen cookie cannot make
 * itself permanent) and dashboard sessions, which can be signed out here.
 */
export function Settings() {
  const keys = useLoad(async () => ok(await api.GET('/api/v1/api-keys', { params: { query: { page: 1, limit: 100 } } })), []);
  const sessions = useLoad(async () => ok(await api.GET('/api/v1/dashboard/sessions', { params: { query: { page: 1, limit: 100 } } })).data, []);
  const [ending, setEnding] = useState<Session>();

  async function signOut(session: Session) {
    ok(await api.DELETE('/api/v1/dashboard/sessions/{id}', { params: { path: { id: session.id } } }));
    // Signing out this browser ends the session: the shell then shows how to sign in again.
    if (session.current) location.reload();
  }

  return (
    <>
      <h1>Settings</h1>
      <Card title="Dashboard sessions">
        <p class="hint">Browsers signed in to this dashboard. A session ends after 12 hours without use, 14 days after sign-in, or when signed out here.</p>
        <Show result={sessions} label="your sessions">
          {(list) => (
            <Table caption="Dashboard sessions" head={['Browser', 'Signed in', 'Last used', 'Ends if unused', '']}>
              {list.map((s) => (
                <tr data-testid="session-row">
                  <td>
                    {browserOf(s.user_agent)} {s.current ? <Badge tone="good">this browser</Badge> : null}
                  </td>
                  <td>{dateTime(s.created_at)}</td>
                  <td>{dateTime(s.last_seen_at)}</td>
                  <td>{dateTime(s.idle_expires_at)}</td>
                  <td>
                    <button type="button" onClick={() => setEnding(s)}>
                      Sign out
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Show>
      </Card>
      <Card title="API keys">
        <p class="hint">
          Keys let your own tools and integrations use the Tribes API. For safety, keys are created and revoked with an API key (POST and DELETE /api/v1/api-keys),
          not from a dashboard session.
        </p>
        <Show result={keys} label="your API keys">
          {(page) => (
            <Table caption="API keys" head={['Name', 'Key', 'Access', 'Created', 'Last used', 'State']}>
              {page.data.map((k) => (
                <tr data-testid="api-key-row">
                  <td>{k.name ?? 'Unnamed'}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.scope === 'full' ? 'Full access' : 'Read only'}</td>
                  <td>{dateTime(k.created_at)}</td>
                  <td>{k.last_used_at ? dateTime(k.last_used_at) : 'Never'}</td>
                  <td>{k.revoked_at ? <Badge tone="bad">Revoked {dateTime(k.revoked_at)}</Badge> : <Badge tone="good">Active</Badge>}</td>
                </tr>
              ))}
            </Table>
          )}
        </Show>
      </Card>
      {ending ? (
        <Confirm
          title={ending.current ? 'Sign out of this browser?' : 'Sign out that browser?'}
          confirmLabel="Sign out"
          danger
          onConfirm={() => signOut(ending)}
          onClose={() => setEnding(undefined)}
          onDone={() => sessions.reload()}
        >
          <p>
            {ending.current
              ? 'This browser will need a new sign-in link to open the dashboard again.'
              : `The session of ${browserOf(ending.user_agent)}, signed in ${dateTime(ending.created_at)}, ends at once.`}
          </p>
        </Confirm>
      ) : null}
    </>
  );
}

/** "Chrome on Linux" from a user agent, enough to tell sessions apart. */
function browserOf(agent: string | null): string {
  if (!agent) return 'Unknown browser';
  const browser = /Edg\//.test(agent) ? 'Edge' : /Firefox\//.test(agent) ? 'Firefox' : /Chrom(e|ium)\//.test(agent) ? 'Chrome' : /Safari\//.test(agent) ? 'Safari' : 'A browser';
  const os = /Windows/.test(agent) ? 'Windows' : /Android/.test(agent) ? 'Android' : /iPhone|iPad/.test(agent) ? 'iOS' : /Mac OS/.test(agent) ? 'macOS' : /Linux/.test(agent) ? 'Linux' : '';
  return os ? `${browser} on ${os}` : browser;
}
