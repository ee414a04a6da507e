export { atomic, leased, specification, transparent, type FetchRequest } from './fetch.js';
