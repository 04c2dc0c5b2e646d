/** Not built yet: the Members screen (issue #29). */
export function Members() {
  return <h1>Members</h1>;
}
