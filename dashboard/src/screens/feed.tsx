/** Not built yet: the Feed screen (issue #29). */
export function Feed() {
  return <h1>Feed</h1>;
}
