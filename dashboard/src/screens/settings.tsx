/** Not built yet: the Settings screen (issue #29). */
export function Settings() {
  return <h1>Settings</h1>;
}
