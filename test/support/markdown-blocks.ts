import { readFileSync } from 'node:fs';

/** A fenced code block of a Markdown file, with the words and `key=value` pairs after its language. */
export interface CodeBlock {
  readonly source: string;
  readonly line: number;
  readonly language: string;
  readonly flags: ReadonlySet<string>;
  readonly attributes: ReadonlyMap<string, string>;
  readonly code: string;
}

const FENCE = /^```(\S*)(.*)\n([\s\S]*?)^```[ \t]*$/gm;

export function codeBlocks(path: string, source = path): CodeBlock[] {
  const text = readFileSync(path, 'utf8');
  const blocks: CodeBlock[] = [];
  for (const match of text.matchAll(FENCE)) {
    const [, language = '', info = '', code = ''] = match;
    const words = info
      .trim()
      .split(/\s+/)
      .filter((word) => word !== '');
    blocks.push({
      source,
      line: text.slice(0, match.index).split('\n').length,
      language,
      flags: new Set(words.filter((word) => !word.includes('='))),
      attributes: new Map(
        words
          .filter((word) => word.includes('='))
          .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
      ),
      code,
    });
  }
  return blocks;
}
