import { milliseconds, type OptionRules } from '../core/option-rules.js';
import type { PrismaTransactionOptions } from './clients/from-prisma.js';

/** The time limits `fromPrisma` hands Prisma: both are timers, in Prisma's engine. */
export const prismaTransactionRules = {
  maxWait: milliseconds(1),
  timeout: milliseconds(1),
} as const satisfies OptionRules<PrismaTransactionOptions>;
