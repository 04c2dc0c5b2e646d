import './styles.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { onSignedOut } from './api/client.js';
import { useRoute, type Route } from './router.js';
import { SCREENS, type Screen } from './screens/index.js';
import { SignedOut } from './screens/signed-out.js';

/**
 * The shell: a skip link, the navigation (wrapping, never scrolling the page sideways at
 * 375 px) and the screen the hash names. Each screen reads the API itself; a 401 anywhere
 * means the session ended, and the shell shows how to get a new sign-in link.
 */
function App() {
  const route = useRoute();
  const [signedOut, setSignedOut] = useState(false);
  useEffect(() => onSignedOut(() => setSignedOut(true)), []);
  const screen = SCREENS.find((s) => s.path === (route.parts[0] ?? 'overview')) ?? SCREENS[0]!;
  // On a move to another screen, focus goes to its content (as a page load would put a screen
  // reader there); not on the first load, where Tab must start at the skip link and navigation.
  const first = useRef(true);
  useEffect(() => {
    document.title = `${screen.title} · Tribes`;
    if (first.current) first.current = false;
    else document.getElementById('main')?.focus({ preventScroll: true });
  }, [screen]);
  if (signedOut) return <SignedOut />;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Tribes</span>
        <Nav current={screen} />
      </header>
      <main id="main" tabIndex={-1}>
        <Body screen={screen} route={route} />
      </main>
    </>
  );
}

function Nav({ current }: { current: Screen }) {
  return (
    <nav aria-label="Dashboard">
      <ul>
        {SCREENS.filter((s) => !s.hidden).map((s) => (
          <li>
            <a href={`#/${s.path}`} aria-current={s === current ? 'page' : undefined}>
              {s.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Body({ screen, route }: { screen: Screen; route: Route }) {
  const View = screen.view;
  return <View route={route} />;
}

const root = document.getElementById('app')!;
// The static "Loading…" line is replaced, not diffed against.
root.textContent = '';
render(<App />, root);
