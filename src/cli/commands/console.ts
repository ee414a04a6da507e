import { createServer } from 'node:http';
import { count } from '../../core/option-rules.js';
import type { Command } from 'commander';
import { LOOPBACK_HOSTS } from '../../console/allowed-hosts.js';
import { consoleNode } from '../../console/mount/node.js';
import { databaseCommand, type DatabaseFlags, numberFlag } from '../database-command.js';
import { actorName } from '../operator-action.js';
import { print } from '../terminal-text.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

interface ConsoleFlags extends DatabaseFlags {
  readonly port: number;
  readonly host: string;
  readonly allowActions?: boolean;
  readonly showBodies?: boolean;
  readonly actor?: string;
  readonly module?: string;
  readonly allowedHost?: readonly string[];
}

/** `retrysafe console`: the operations console on a port of this machine, read-only unless told otherwise. */
export function registerConsole(program: Command, source: OperatorToolsSource): Command {
  return databaseCommand(program, 'console')
    .description(
      'Serve the operations console: operations by state, search by key, stuck leases, unknown outcomes, dead letters. Read-only unless --allow-actions.',
    )
    .option('--port <n>', 'the port to listen on (0: any free one, printed)', numberFlag(count(0, 65_535)), 4010)
    .option('--host <address>', 'the address to listen on; anyone who can reach it can use the console', '127.0.0.1')
    .option(
      '--allow-actions',
      'let the console resolve, retry and purge operations and requeue dead letters and parked webhook events',
    )
    .option('--show-bodies', 'let the console show stored response bodies when asked (they may hold personal data)')
    .option(
      '--allowed-host <host>',
      'another host name the console answers for, as "name" (any port) or "name:port"; repeatable. It always answers for localhost, 127.0.0.1, [::1] and --host on its port, and refuses any other name (421), which keeps out sites that point their own name at it',
      (host: string, hosts: readonly string[] | undefined) => [...(hosts ?? []), host],
    )
    .option('--actor <name>', 'who is recorded with every action (default: the user running the command)')
    .option(
      '--module <path>',
      'a module whose "config(database)" gives the application\'s retention and policy; see docs/operations.md',
    )
    .action(async (flags: ConsoleFlags, command: Command) => {
      await source(command, flags, async (tools) => {
        const actor = actorName(flags.actor);
        const server = createServer();
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(flags.port, flags.host, resolve);
        });
        const address = server.address();
        const port = typeof address === 'object' && address !== null ? address.port : flags.port;
        const bound = flags.host.includes(':') ? `[${flags.host}]` : flags.host;
        // Known only now: the port, when --port 0 let the system choose it.
        const handler = consoleNode({
          tools,
          allowActions: flags.allowActions === true,
          showBodies: flags.showBodies === true,
          allowedHosts: [...[...LOOPBACK_HOSTS, bound].map((name) => `${name}:${port}`), ...(flags.allowedHost ?? [])],
          authorize: () => ({ read: true, act: flags.allowActions === true, actor }),
        });
        server.on('request', (req, res) => void handler(req, res));
        print(
          `Console on http://${bound}:${port}/ (${flags.allowActions === true ? `actions allowed, as ${actor}` : 'read-only'}).\n`,
        );
        await new Promise<void>((resolve) => {
          const stop = () => server.close(() => resolve());
          process.once('SIGTERM', stop);
          process.once('SIGINT', stop);
        });
      });
    });
}
