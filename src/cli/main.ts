#!/usr/bin/env node
import { CommanderError } from 'commander';
import { createProgram } from './program.js';

/** Exit code of a usage error (unknown option, missing argument, bad value). */
const USAGE_ERROR = 2;

try {
  await createProgram().parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  process.exitCode = error.exitCode === 0 ? 0 : USAGE_ERROR;
}
