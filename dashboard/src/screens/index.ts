import type { FunctionComponent } from 'preact';
import type { Route } from '../router.js';
import { Communities } from './communities.js';
import { Feed } from './feed.js';
import { Member } from './member.js';
import { Members } from './members.js';
import { Money } from './money.js';
import { Overview } from './overview.js';
import { Retention } from './retention.js';
import { Settings } from './settings.js';
import { Training } from './training.js';
import { Webhooks } from './webhooks.js';

export interface Screen {
  /** The first segment of the hash route: #/members. */
  path: string;
  title: string;
  view: FunctionComponent<{ route: Route }>;
  /** Reachable by link only (not in the navigation). */
  hidden?: boolean;
}

/** Every screen, in the navigation's order; the first is the default. */
export const SCREENS: Screen[] = [
  { path: 'overview', title: 'Overview', view: Overview },
  { path: 'members', title: 'Members', view: Members },
  { path: 'member', title: 'Member', view: Member, hidden: true },
  { path: 'retention', title: 'Retention', view: Retention },
  { path: 'communities', title: 'Communities', view: Communities },
  { path: 'training', title: 'Programs & challenges', view: Training },
  { path: 'feed', title: 'Feed', view: Feed },
  { path: 'money', title: 'Money', view: Money },
  { path: 'webhooks', title: 'Webhooks', view: Webhooks },
  { path: 'settings', title: 'Settings', view: Settings },
];
