/** Not built yet: the Retention screen (issue #29). */
export function Retention() {
  return <h1>Retention</h1>;
}
