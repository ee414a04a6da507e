import { describe, expect, it } from 'vitest';
import { splitHosts } from './read-write-pool.js';

describe('multi-host DATABASE_URL', () => {
  it('gives one URL per host, in order, with the credentials, database and other parameters of the original', () => {
    expect(
      splitHosts('postgres://u:p@db1:5432,db2:5433/orders?target_session_attrs=read-write&sslmode=disable'),
    ).toEqual([
      { host: 'db1:5432', url: 'postgres://u:p@db1:5432/orders?sslmode=disable' },
      { host: 'db2:5433', url: 'postgres://u:p@db2:5433/orders?sslmode=disable' },
    ]);
    expect(splitHosts('postgresql://h1,h2/db?target_session_attrs=read-write')).toEqual([
      { host: 'h1', url: 'postgresql://h1/db' },
      { host: 'h2', url: 'postgresql://h2/db' },
    ]);
  });

  it('leaves a single-host URL as it is', () => {
    expect(splitHosts('postgres://u@db:5432/orders')).toEqual([
      { host: 'db:5432', url: 'postgres://u@db:5432/orders' },
    ]);
  });
});
