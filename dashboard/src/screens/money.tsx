/** Not built yet: the Money screen (issue #29). */
export function Money() {
  return <h1>Money</h1>;
}
