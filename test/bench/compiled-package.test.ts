import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const serverDir = join(root, 'bench/server');
const sourceDir = join(root, 'src');

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? typeScriptFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Whether an import brings in nothing but types, so that it is erased from the JavaScript that runs. */
function typesOnly(clause: ts.ImportClause | undefined): boolean {
  if (clause === undefined) return false;
  if (clause.isTypeOnly) return true;
  if (clause.name !== undefined) return false;
  const bindings = clause.namedBindings;
  return (
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

/** The imports of `file` that load retrysafe's TypeScript sources when the file runs. */
function sourcesLoaded(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const loaded: string[] = [];
  const visit = (node: ts.Node): void => {
    const specifier =
      ts.isImportDeclaration(node) && !typesOnly(node.importClause)
        ? node.moduleSpecifier
        : ts.isExportDeclaration(node) && !node.isTypeOnly
          ? node.moduleSpecifier
          : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
            ? node.arguments[0]
            : undefined;
    if (specifier !== undefined && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
      const target = resolve(file, '..', specifier.text);
      if (!relative(sourceDir, target).startsWith('..')) loaded.push(`${relative(root, file)}: ${specifier.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return loaded;
}

/**
 * The servers under test run retrysafe as an application does, from the
 * package's compiled JavaScript. Its sources through the bench's TypeScript
 * loader cost more per request (the loader defines a name on every function
 * it creates), a cost no other library in the bench pays.
 */
describe('the bench servers', () => {
  it('load retrysafe from its compiled package, and its sources for types only', () => {
    const files = typeScriptFiles(serverDir);
    expect(files.length).toBeGreaterThan(5);
    expect(files.flatMap(sourcesLoaded)).toEqual([]);
  });
});
