import { execFileSync } from 'node:child_process';
import { repoRoot } from './child-process.js';

/** Which code was measured: the commit, and how many files under src/ differed from it. */
export interface Source {
  readonly commit: string;
  readonly changedFiles: number;
}

export function describeSource(): Source {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  return {
    commit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    changedFiles: git('status', '--porcelain', '--', 'src')
      .split('\n')
      .filter((line) => line !== '').length,
  };
}
