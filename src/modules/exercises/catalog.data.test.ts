import { describe, expect, it } from 'vitest';
import { EQUIPMENT, EXERCISES, EXERCISE_KINDS, MUSCLE_GROUPS, type ExerciseSeed } from './catalog.data.js';
import { Exercise, EXERCISE_TEXT_MAX } from './exercises.schemas.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const duplicates = (values: readonly string[]): string[] => {
  const seen = new Set<string>();
  return values.filter((v) => (seen.has(v) ? true : (seen.add(v), false)));
};

const bySlug = (slug: string): ExerciseSeed => {
  const found = EXERCISES.find((e) => e.slug === slug);
  if (!found) throw new Error(`no exercise with slug ${slug}`);
  return found;
};

describe('exercise catalog', () => {
  it('holds at least 130 exercises', () => {
    expect(EXERCISES.length).toBeGreaterThanOrEqual(130);
  });

  it('gives every exercise a unique, valid, lowercase v4 UUID', () => {
    for (const e of EXERCISES) expect(e.id, e.slug).toMatch(UUID_V4);
    expect(duplicates(EXERCISES.map((e) => e.id))).toEqual([]);
  });

  it('gives every exercise a unique kebab-case slug', () => {
    for (const e of EXERCISES) expect(e.slug, e.name).toMatch(SLUG);
    expect(duplicates(EXERCISES.map((e) => e.slug))).toEqual([]);
  });

  it('gives every exercise a non-blank English and Portuguese name, each unique ignoring case', () => {
    for (const e of EXERCISES) {
      expect(e.name.trim(), e.slug).toBe(e.name);
      expect(e.name_pt.trim(), e.slug).toBe(e.name_pt);
      expect(e.name.length, e.slug).toBeGreaterThan(0);
      expect(e.name_pt.length, e.slug).toBeGreaterThan(0);
    }
    expect(duplicates(EXERCISES.map((e) => e.name.toLowerCase()))).toEqual([]);
    expect(duplicates(EXERCISES.map((e) => e.name_pt.toLowerCase()))).toEqual([]);
  });

  // The OpenAPI document promises these bounds for every exercise answer, catalog ones included.
  it('keeps names and slugs within the bounds of an exercise answer, and equipment within its count', () => {
    const maxEquipment = Exercise.properties.equipment.maxItems!;
    for (const e of EXERCISES) {
      for (const text of [e.name, e.name_pt, e.slug]) expect([...text].length, e.slug).toBeLessThanOrEqual(EXERCISE_TEXT_MAX);
      expect(e.equipment.length, e.slug).toBeLessThanOrEqual(maxEquipment);
    }
  });

  it('uses only values from the closed sets for muscle groups, equipment and kind', () => {
    const groups = new Set<string>(MUSCLE_GROUPS);
    const equipment = new Set<string>(EQUIPMENT);
    const kinds = new Set<string>(EXERCISE_KINDS);
    for (const e of EXERCISES) {
      expect(groups.has(e.muscle_group), e.slug).toBe(true);
      for (const m of e.secondary_muscles) expect(groups.has(m), `${e.slug}: ${m}`).toBe(true);
      for (const q of e.equipment) expect(equipment.has(q), `${e.slug}: ${q}`).toBe(true);
      expect(kinds.has(e.kind), e.slug).toBe(true);
    }
  });

  it('never lists the primary group among the secondary muscles, nor a secondary muscle twice', () => {
    for (const e of EXERCISES) {
      expect(e.secondary_muscles, e.slug).not.toContain(e.muscle_group);
      expect(duplicates(e.secondary_muscles), e.slug).toEqual([]);
    }
  });

  it('has at least four primary exercises for every muscle group', () => {
    for (const group of MUSCLE_GROUPS) {
      const count = EXERCISES.filter((e) => e.muscle_group === group).length;
      expect(count, group).toBeGreaterThanOrEqual(4);
    }
  });

  it('lists at least one piece of equipment per exercise, without duplicates', () => {
    for (const e of EXERCISES) {
      expect(e.equipment.length, e.slug).toBeGreaterThan(0);
      expect(duplicates(e.equipment), e.slug).toEqual([]);
    }
  });

  it('never combines "bodyweight" (no equipment) with another piece of equipment', () => {
    for (const e of EXERCISES) {
      if (e.equipment.includes('bodyweight')) expect(e.equipment, e.slug).toEqual(['bodyweight']);
    }
  });

  it('uses every equipment value and every kind at least once', () => {
    const usedEquipment = new Set(EXERCISES.flatMap((e) => e.equipment));
    expect(EQUIPMENT.filter((q) => !usedEquipment.has(q))).toEqual([]);
    const usedKinds = new Set(EXERCISES.map((e) => e.kind));
    expect(EXERCISE_KINDS.filter((k) => !usedKinds.has(k))).toEqual([]);
  });

  it('is sorted by muscle group (in declaration order), then by English name', () => {
    const sorted = [...EXERCISES].sort(
      (a, b) =>
        MUSCLE_GROUPS.indexOf(a.muscle_group) - MUSCLE_GROUPS.indexOf(b.muscle_group) ||
        a.name.localeCompare(b.name, 'en'),
    );
    expect(EXERCISES.map((e) => e.slug)).toEqual(sorted.map((e) => e.slug));
  });

  it('classifies the barbell back squat as a weighted quadriceps exercise', () => {
    const squat = bySlug('barbell-back-squat');
    expect(squat.name).toBe('Barbell Back Squat');
    expect(squat.muscle_group).toBe('quadriceps');
    expect(squat.kind).toBe('weighted');
    expect(squat.equipment).toContain('barbell');
  });

  it('classifies the plank as a timed core exercise', () => {
    expect(bySlug('plank')).toMatchObject({ muscle_group: 'core', kind: 'timed', equipment: ['bodyweight'] });
  });

  it('classifies the push-up as a bodyweight chest exercise that also trains the triceps', () => {
    const pushUp = bySlug('push-up');
    expect(pushUp).toMatchObject({ muscle_group: 'chest', kind: 'bodyweight' });
    expect(pushUp.secondary_muscles).toContain('triceps');
  });

  it('classifies the pull-up as bodyweight back work and the weighted pull-up as weighted', () => {
    expect(bySlug('pull-up')).toMatchObject({ muscle_group: 'back', kind: 'bodyweight' });
    expect(bySlug('weighted-pull-up')).toMatchObject({ muscle_group: 'back', kind: 'weighted' });
  });

  it('classifies the Romanian deadlift as hamstrings, the hip thrust as glutes and the standing calf raise as calves', () => {
    expect(bySlug('barbell-romanian-deadlift').muscle_group).toBe('hamstrings');
    expect(bySlug('barbell-hip-thrust').muscle_group).toBe('glutes');
    expect(bySlug('standing-calf-raise').muscle_group).toBe('calves');
  });

  it('classifies curls as biceps, pushdowns as triceps and lateral raises as shoulders', () => {
    expect(bySlug('barbell-curl').muscle_group).toBe('biceps');
    expect(bySlug('rope-triceps-pushdown').muscle_group).toBe('triceps');
    expect(bySlug('dumbbell-lateral-raise').muscle_group).toBe('shoulders');
  });

  it('files treadmill runs and rowing as timed cardio and thrusters and kettlebell swings as full-body lifts', () => {
    expect(bySlug('treadmill-run')).toMatchObject({ muscle_group: 'cardio', kind: 'timed', equipment: ['cardio_machine'] });
    expect(bySlug('rowing-machine')).toMatchObject({ muscle_group: 'cardio', kind: 'timed' });
    expect(bySlug('barbell-thruster')).toMatchObject({ muscle_group: 'full_body', kind: 'weighted' });
    expect(bySlug('kettlebell-swing')).toMatchObject({ muscle_group: 'full_body', kind: 'weighted' });
  });

  it('makes every cardio-machine exercise timed', () => {
    for (const e of EXERCISES.filter((x) => x.equipment.includes('cardio_machine'))) expect(e.kind, e.slug).toBe('timed');
  });
});
