import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Every subpath of package.json's `exports` (`retrysafe`, `retrysafe/postgres`, …) and the source file behind it. */
export function subpaths(): readonly { readonly name: string; readonly file: string }[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, string>>;
  };
  return Object.entries(manifest.exports).map(([path, entry]) => {
    const source = entry['retrysafe-source'];
    if (source === undefined) throw new Error(`The export ${path} has no retrysafe-source condition.`);
    return { name: path === '.' ? 'retrysafe' : `retrysafe/${path.slice(2)}`, file: join(root, source) };
  });
}

/** One public name, as a user meets it. */
export interface PublicName {
  readonly subpath: string;
  readonly name: string;
  readonly kind: 'class' | 'function' | 'const' | 'type';
  readonly symbol: ts.Symbol;
}

export interface Surface {
  readonly names: readonly PublicName[];
  /** Named types that a public name's signature or members show, declared in src/ yet exported by no subpath. */
  readonly unnameable: readonly string[];
}

/** Reads the public surface from the entry files with the compiler, as a consumer's editor would see it. */
export function readSurface(): Surface {
  const entries = subpaths();
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (config === undefined) throw new Error('tsconfig.json could not be read.');
  const program = ts.createProgram(
    entries.map((e) => e.file),
    { ...config.options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const names: PublicName[] = [];
  for (const entry of entries) {
    const source = program.getSourceFile(entry.file);
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`${entry.file} is not a module.`);
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      names.push({ subpath: entry.name, name: exported.getName(), kind: kindOf(symbol), symbol });
    }
  }
  return { names, unnameable: unnameable(checker, names) };
}

function kindOf(symbol: ts.Symbol): PublicName['kind'] {
  if (symbol.flags & ts.SymbolFlags.Class) return 'class';
  if (symbol.flags & ts.SymbolFlags.Function) return 'function';
  if (symbol.flags & ts.SymbolFlags.Variable) return 'const';
  return 'type';
}

/** The surface as committed: one line per name, grouped by subpath. */
export function listing(names: readonly PublicName[]): string {
  const lines: string[] = [];
  for (const subpath of [...new Set(names.map((n) => n.subpath))]) {
    lines.push(subpath);
    for (const n of names.filter((m) => m.subpath === subpath).sort((a, b) => a.name.localeCompare(b.name)))
      lines.push(`  ${n.kind} ${n.name}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Walks what the public names show (parameters, results, members, type
 * arguments) and reports every named type declared under src/ that no subpath
 * exports: a user could meet it and not write it down.
 */
function unnameable(checker: ts.TypeChecker, names: readonly PublicName[]): string[] {
  const exported = new Set(names.map((n) => n.symbol));
  const seen = new Set<ts.Type>();
  const missing = new Set<string>();
  const fromSource = (symbol: ts.Symbol | undefined): ts.Declaration | undefined => {
    const declaration = symbol?.declarations?.[0];
    const file = declaration?.getSourceFile().fileName;
    return file !== undefined && relative(root, file).startsWith('src/') ? declaration : undefined;
  };
  const visitSymbol = (symbol: ts.Symbol): void => {
    for (const declaration of symbol.declarations ?? []) {
      if (!isHidden(declaration)) visit(checker.getTypeOfSymbolAtLocation(symbol, declaration));
    }
  };
  const visitSignature = (signature: ts.Signature): void => {
    for (const parameter of signature.getParameters()) visitSymbol(parameter);
    visit(signature.getReturnType());
  };
  const visit = (type: ts.Type): void => {
    if (seen.has(type)) return;
    seen.add(type);
    const named = type.aliasSymbol ?? type.getSymbol();
    const declaration = fromSource(named);
    if (named !== undefined && declaration !== undefined && isExportedType(declaration) && !exported.has(named)) {
      missing.add(`${named.getName()} (${relative(root, declaration.getSourceFile().fileName)})`);
    }
    for (const argument of type.aliasTypeArguments ?? []) visit(argument);
    if (type.isUnionOrIntersection()) type.types.forEach(visit);
    if (type.flags & ts.TypeFlags.Object && (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference)
      checker.getTypeArguments(type as ts.TypeReference).forEach(visit);
    // Only types of this library are walked inside: a framework's or a driver's own types are theirs to name.
    if (named !== undefined && fromSource(named) === undefined && !(named.flags & ts.SymbolFlags.TypeLiteral)) return;
    for (const property of type.getProperties()) visitSymbol(property);
    for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) visitSignature(signature);
  };
  for (const n of names) {
    if (n.kind === 'type') {
      visit(checker.getDeclaredTypeOfSymbol(n.symbol));
    } else if (n.symbol.valueDeclaration !== undefined) {
      const type = checker.getTypeOfSymbolAtLocation(n.symbol, n.symbol.valueDeclaration);
      seen.delete(type);
      visit(type);
      if (n.kind === 'class') visit(checker.getDeclaredTypeOfSymbol(n.symbol));
    }
  }
  return [...missing].sort();
}

/**
 * A type its own file exports: meant to be named elsewhere. A file's private
 * helper types (the shape of a driver's result, say) are left unnamed on purpose.
 */
function isExportedType(declaration: ts.Declaration): boolean {
  const named =
    ts.isInterfaceDeclaration(declaration) ||
    ts.isTypeAliasDeclaration(declaration) ||
    ts.isClassDeclaration(declaration) ||
    ts.isEnumDeclaration(declaration);
  return named && (ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Export) !== 0;
}

/** A class's private or protected member, or a `#field`: no user meets its type. */
function isHidden(declaration: ts.Declaration): boolean {
  if (ts.getCombinedModifierFlags(declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) return true;
  const name = ts.getNameOfDeclaration(declaration);
  return name !== undefined && ts.isPrivateIdentifier(name);
}
