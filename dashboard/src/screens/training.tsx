import './communities.css';
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { Route } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { ChallengeDetail } from './training-challenge.js';
import { ChallengesCard } from './training-challenges.js';
import { ProgramDetail } from './training-program.js';
import { ProgramsCard } from './training-programs.js';

/**
 * Programs & challenges (#/training, #/training/program/ID, #/training/challenge/ID): the
 * chosen program or challenge on top, then both lists with their "New …" forms. The
 * communities are read once: every form picks one and every row names its own.
 */
export function Training({ route }: { route: Route }) {
  const [kind, id] = [route.parts[1], route.parts[2]];
  const communities = useLoad(async () => ok(await api.GET('/api/v1/communities', { params: { query: { page: 1, limit: 100 } } })).data, []);
  // Bumped when a detail changes a program or challenge, so the lists below read it again.
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((n) => n + 1);
  // The detail opens above the lists: bring it into view when a row far down was chosen.
  useEffect(() => void (id && scrollTo({ top: 0 })), [id]);
  return (
    <>
      <h1>Programs &amp; challenges</h1>
      <Show result={communities} label="your communities">
        {(list) => (
          <>
            {kind === 'program' && id ? <ProgramDetail key={id} id={id} communities={list} onChanged={changed} /> : null}
            {kind === 'challenge' && id ? <ChallengeDetail key={id} id={id} communities={list} onChanged={changed} /> : null}
            <ProgramsCard communities={list} selected={kind === 'program' ? id : undefined} reload={version} />
            <ChallengesCard communities={list} selected={kind === 'challenge' ? id : undefined} reload={version} />
          </>
        )}
      </Show>
    </>
  );
}
