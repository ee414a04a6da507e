import { loadPeer } from './server/peers/load-peer.js';

/** The Redis commands the bench itself sends, outside any server under test. */
interface RawRedis {
  connect(): Promise<RawRedis>;
  sendCommand(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

export interface RedisAdmin {
  readonly version: string;
  /** Deletes every key whose name contains `tag`: the peers' records of one scenario. */
  forget(tag: string): Promise<number>;
  close(): Promise<void>;
}

/** For a run of no other library's scenario: no Redis is connected, none is needed. */
export const withoutRedis: RedisAdmin = {
  version: 'not used',
  forget: () => Promise.resolve(0),
  close: () => Promise.resolve(),
};

export async function redisAdmin(url: string): Promise<RedisAdmin> {
  const redis = await loadPeer<{ createClient(options: { url: string }): RawRedis }>('@redis/client');
  const client = await redis.createClient({ url }).connect();
  const info = String(await client.sendCommand(['INFO', 'server']));
  return {
    version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    async forget(tag) {
      let cursor = '0';
      let deleted = 0;
      do {
        const [nextCursor, keys] = (await client.sendCommand([
          'SCAN',
          cursor,
          'MATCH',
          `*${tag}*`,
          'COUNT',
          '1000',
        ])) as [string, string[]];
        if (keys.length > 0) deleted += Number(await client.sendCommand(['UNLINK', ...keys]));
        cursor = nextCursor;
      } while (cursor !== '0');
      return deleted;
    },
    close: () => client.close(),
  };
}
