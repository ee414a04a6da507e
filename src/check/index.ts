export { check } from './check.js';
export { CheckError, isCheckError, type CheckErrorCode } from './check-error.js';
export { checkDefaults, MAX_CONCURRENCY, type CheckOptions } from './check-options.js';
export { notApplicable, probeNames, type CheckReport, type Evidence, type ProbeName, type ProbeResult } from './check-report.js';
export { formatReport } from './report-table.js';
export { UUID_TOKEN } from './body-template.js';
export type { Rule } from './rules.js';
