import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** A `curl` line of the docs and the answer written under it: `# → <status> … \`text the answer contains\``. */
export interface DocumentedRequest {
  readonly kind: 'request';
  readonly command: string;
  readonly status: number;
  readonly contains: readonly string[];
}

/** A `name=$(…)` line: the command's output, kept in a shell variable for the lines after it. */
export interface DocumentedVariable {
  readonly kind: 'variable';
  readonly name: string;
  readonly command: string;
}

export type DocumentedStep = DocumentedRequest | DocumentedVariable;

export interface Answer {
  readonly status: number;
  readonly headers: string;
  readonly body: string;
}

/** The curl commands of a shell block (continuation lines joined), each with the expectation that follows it, and its variables. */
export function documentedRequests(script: string): DocumentedStep[] {
  const lines = script.replace(/\\\n\s*/g, '').split('\n');
  const requests: DocumentedStep[] = [];
  for (const [index, line] of lines.entries()) {
    const variable = line.match(/^(\w+)=\$\((.*)\)$/);
    if (variable !== null) requests.push({ kind: 'variable', name: variable[1] ?? '', command: variable[2] ?? '' });
    if (!line.startsWith('curl ')) continue;
    const expectation = lines[index + 1]?.match(/^# → (\d{3})(.*)$/);
    if (expectation === null || expectation === undefined)
      throw new Error(`"${line}" has no "# → <status>" line under it`);
    requests.push({
      kind: 'request',
      command: line,
      status: Number(expectation[1]),
      contains: [...(expectation[2] ?? '').matchAll(/`([^`]+)`/g)].map((found) => found[1] ?? ''),
    });
  }
  return requests;
}

const exec = promisify(execFile);

/** Runs a documented command as written in a shell with `variables`, its documented ports mapped to the ones in use. */
export async function run(
  command: string,
  ports: ReadonlyMap<number, number>,
  variables: Readonly<Record<string, string>>,
): Promise<string> {
  const mapped = command.replace(/localhost:(\d+)/g, (_whole, port: string) => {
    const actual = ports.get(Number(port));
    if (actual === undefined) throw new Error(`${command}: nothing documented listens on ${port}`);
    return `localhost:${actual}`;
  });
  const { stdout } = await exec('sh', ['-c', mapped], { env: { ...process.env, ...variables } });
  return stdout;
}

/** Sends a documented curl command and splits the answer `curl -i` printed. */
export async function send(
  command: string,
  ports: ReadonlyMap<number, number>,
  variables: Readonly<Record<string, string>>,
): Promise<Answer> {
  const stdout = await run(`${command} --silent --show-error --max-time 20`, ports, variables);
  const split = stdout.indexOf('\r\n\r\n');
  const headers = split === -1 ? stdout : stdout.slice(0, split);
  const status = Number(headers.match(/^HTTP\/[\d.]+ (\d{3})/)?.[1]);
  return { status, headers, body: split === -1 ? '' : stdout.slice(split + 4) };
}

/** The value of the `Idempotency-Key` a command sends, if any. */
export function keyOf(command: string): string | undefined {
  return command.match(/Idempotency-Key: ([^'"]+)/i)?.[1];
}
