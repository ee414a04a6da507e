export { check } from './check.js';
export { CodedError } from '../core/coded-error.js';
export { CheckError, isCheckError, type CheckErrorCode } from './check-error.js';
export type { CheckOptions } from './check-options.js';
export {
  probeNames,
  type CheckReport,
  type Evidence,
  type ProbeName,
  type ProbeResult,
  type Rule,
} from './check-report.js';
export { formatReport } from './report-table.js';
