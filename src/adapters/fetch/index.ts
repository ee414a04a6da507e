export { atomic, leased, transparent, type FetchRequest } from './fetch.js';
