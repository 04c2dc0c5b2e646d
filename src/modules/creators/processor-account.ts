import { AppError } from '../../http/errors.js';
import type { CreatorsRepo } from './creators.repo.js';

/** The creator's connected account at the processor; every money action needs it. */
export async function requireProcessorAccount(creators: CreatorsRepo, creatorId: string): Promise<string> {
  const creator = await creators.findCreator(creatorId);
  if (!creator?.processor_account_id) {
    throw new AppError('conflict', 'This creator has no payment processor account yet; ask the operator to connect one.');
  }
  return creator.processor_account_id;
}
