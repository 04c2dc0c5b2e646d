/** Not built yet: the Training screen (issue #29). */
export function Training() {
  return <h1>Training</h1>;
}
