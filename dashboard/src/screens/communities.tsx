/** Not built yet: the Communities screen (issue #29). */
export function Communities() {
  return <h1>Communities</h1>;
}
