import { v7 } from 'uuid';

/** Time-ordered UUIDv7: new rows land at the right edge of their indexes. */
export const newId = (): string => v7();
