/**
 * The dates the API takes: 1900-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, compared in UTC
 * once the offset is applied (`9999-12-31T23:00:00-12:00` is in year 10000 and refused).
 *
 * Why these: PostgreSQL's `date` and `timestamptz` go further, but the drivers do not read
 * everything back as written. A year past 9999 is stored and then read back as text JavaScript
 * cannot parse, year 0 fails on the way in (both were a 500), and the embedded database reads
 * years 0001–0099 back as 2001–2099. Inside this range both databases store a date and read it back
 * exactly; nothing this service does needs a date outside it.
 *
 * The app's validator (validation.ts) holds every `date` and `date-time` input to this range,
 * whatever schema declares it; the shared schemas (schemas.ts DateInput, DateTimeInput) also
 * say it in the OpenAPI document.
 */
export const EARLIEST_DAY = '1900-01-01';
export const LATEST_DAY = '9999-12-31';
export const EARLIEST_INSTANT = `${EARLIEST_DAY}T00:00:00Z`;
export const LATEST_INSTANT = `${LATEST_DAY}T23:59:59.999Z`;
export const EARLIEST_MS = Date.parse(EARLIEST_INSTANT);
export const LATEST_MS = Date.parse(LATEST_INSTANT);

/** The message of a date or date-time outside the range (or not one at all), for a person. */
export const DATE_RANGE_MESSAGE = `must be a date (YYYY-MM-DD) between ${EARLIEST_DAY} and ${LATEST_DAY}`;
export const DATE_TIME_RANGE_MESSAGE = `must be a date-time with an offset (e.g. 2026-03-01T12:00:00Z) between ${EARLIEST_DAY} and ${LATEST_DAY} once in UTC`;

/** An instant (ms since the epoch) the databases store and read back exactly. */
export const instantInRange = (ms: number): boolean => ms >= EARLIEST_MS && ms <= LATEST_MS;

/** A `YYYY-MM-DD` already known to be a real calendar date: within the range? (string order is date order here) */
export const dayInRange = (day: string): boolean => day >= EARLIEST_DAY && day <= LATEST_DAY;
