/**
 * npm run dev: the server from source (tsx) with the dashboard rebuilt on every change of
 * dashboard/ (esbuild's watch; the server reads the built files per request, so a reload of
 * the page shows the change). The server's own code is not reloaded: restart for that.
 */
import { watchDashboard } from './build-dashboard.js';

await watchDashboard();
await import('../src/server.js');
