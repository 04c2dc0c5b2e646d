import { describe, expect, it } from 'vitest';
import { LOG_SERIALIZERS } from '../../app.js';
import { statusOf, type AccountState } from './status.js';

const NONE = { currently_due: [], eventually_due: [], past_due: [], pending_verification: [], current_deadline: null, disabled_reason: null };
const state = (over: Partial<Omit<AccountState, 'requirements'>> & { requirements?: Partial<AccountState['requirements']> } = {}): AccountState => ({
  charges_enabled: true,
  payouts_enabled: true,
  details_submitted: true,
  ...over,
  requirements: { ...NONE, ...over.requirements },
});

describe('the account status', () => {
  it('asks for onboarding until details are submitted, whatever else the account says', () => {
    expect(statusOf(state({ details_submitted: false, charges_enabled: false, payouts_enabled: false, requirements: { past_due: ['tos_acceptance.date'] } }))).toBe('onboarding_required');
    expect(statusOf(state({ details_submitted: false }))).toBe('onboarding_required');
  });

  it('is active when everything is enabled and nothing is due, even with information still under verification', () => {
    expect(statusOf(state())).toBe('active');
    expect(statusOf(state({ requirements: { eventually_due: ['individual.id_number'], pending_verification: ['individual.dob.day'] } }))).toBe('active');
  });

  it('needs action while enabled with requirements currently or past due', () => {
    expect(statusOf(state({ requirements: { currently_due: ['individual.verification.document'], current_deadline: '2026-12-01T00:00:00.000Z' } }))).toBe('action_required');
    expect(statusOf(state({ requirements: { past_due: ['external_account'] } }))).toBe('action_required');
  });

  it('is under review when something is disabled only while the processor verifies', () => {
    expect(statusOf(state({ charges_enabled: false, requirements: { pending_verification: ['individual.verification.document'] } }))).toBe('pending_review');
    expect(statusOf(state({ payouts_enabled: false, requirements: { disabled_reason: 'under_review' } }))).toBe('pending_review');
  });

  it('is restricted when charges or payouts are disabled for anything else', () => {
    expect(statusOf(state({ charges_enabled: false, requirements: { past_due: ['individual.verification.document'], disabled_reason: 'requirements.past_due' } }))).toBe('restricted');
    expect(statusOf(state({ payouts_enabled: false, requirements: { disabled_reason: 'rejected.fraud' } }))).toBe('restricted');
    // Verification pending does not excuse what is past due.
    expect(statusOf(state({ charges_enabled: false, requirements: { past_due: ['external_account'], pending_verification: ['individual.dob.day'] } }))).toBe('restricted');
  });
});

describe('request log lines', () => {
  it('never carry the token of an onboarding page', () => {
    const line = LOG_SERIALIZERS.req({ method: 'GET', url: '/connect/onboarding/refresh?link=AbC123secret&x=1', host: 'tribes.test', ip: '127.0.0.1' });
    expect(line.url).toBe('/connect/onboarding/refresh?link=[redacted]&x=1');
    expect(LOG_SERIALIZERS.req({ method: 'GET', url: '/api/v1/communities?page=2' }).url).toBe('/api/v1/communities?page=2');
  });
});
