export { atomic, leased, specification, transparent } from './koa.js';
export { keepRawBody } from './body-bytes.js';
