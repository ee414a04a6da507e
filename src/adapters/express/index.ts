export { atomic, keepRawBody, leased, transparent } from './express.js';
