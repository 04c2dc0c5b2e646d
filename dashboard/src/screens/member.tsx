/** Not built yet: the Member screen (issue #29). */
export function Member() {
  return <h1>Member</h1>;
}
