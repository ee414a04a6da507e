export { atomic, leased, transparent } from './koa.js';
export { keepRawBody } from './body-bytes.js';
