export { atomic, keepRawBody, leased, specification, transparent } from './express.js';
