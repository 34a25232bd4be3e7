/**
 * Reads the VNFD's definitions files: the Entry-Definitions file, then every
 * file it imports, breadth first, within MAX_IMPORT_DEPTH and
 * MAX_DEFINITION_FILES. Imports of the ETSI SOL001 type files are supplied
 * by vnfm; URLs are never fetched.
 */
import type { Finding, PackageFiles } from '../model/package-files.js';
import type { VnfdImport } from '../model/vnfd.js';
import { isMapping } from '../yaml.js';
import { isSol001TypeFile, SOL001_VERSION } from './sol001-types.js';
import { type NewFinding, resolveMember, type SourceFile } from './tosca-values.js';
import { lineOf, parseYaml } from './yaml-source.js';

/** Most definitions files one VNFD may pull in through imports. */
export const MAX_DEFINITION_FILES = 64;
/** Deepest chain of imports followed. */
export const MAX_IMPORT_DEPTH = 16;

/** The definitions files of one VNFD, by package path, and the imports that named them. */
export class DefinitionFiles {
  readonly sources = new Map<string, SourceFile>();
  readonly imports: VnfdImport[] = [];

  constructor(
    private readonly pkg: PackageFiles,
    private readonly findings: Finding[],
  ) {}

  private add(f: NewFinding): void {
    this.findings.push({ severity: 'error', ...f });
  }

  async readAll(entry: string): Promise<void> {
    const queue: Array<{ path: string; depth: number }> = [{ path: entry, depth: 0 }];
    const seen = new Set<string>([entry]);
    let limitReported = false;
    while (queue.length > 0) {
      const { path, depth } = queue.shift()!;
      const source = await this.readSource(path);
      if (!source) continue;
      for (const { ref, line } of importRefs(source)) {
        const imp: VnfdImport = { from: path, ref };
        this.imports.push(imp);
        const target = this.resolveImport(source, ref, line, imp);
        if (!target || seen.has(target)) continue;
        if (depth + 1 > MAX_IMPORT_DEPTH || seen.size >= MAX_DEFINITION_FILES) {
          if (!limitReported) {
            limitReported = true;
            this.add({
              code: 'import-limit',
              file: path,
              line,
              message: `imports go deeper than ${MAX_IMPORT_DEPTH} levels or reach more than ${MAX_DEFINITION_FILES} files; ${ref} and any further imports were not read`,
              hint: 'flatten the import chain: the top VNFD usually imports the types file and the flavour files directly',
            });
          }
          continue;
        }
        seen.add(target);
        queue.push({ path: target, depth: depth + 1 });
      }
    }
  }

  private async readSource(path: string): Promise<SourceFile | undefined> {
    let text: string;
    try {
      text = await this.pkg.readText(path);
    } catch (err) {
      this.add({
        code: 'definitions-unreadable',
        file: path,
        message: `cannot be read: ${err instanceof Error ? err.message : String(err)}`,
        hint: 'VNFD files are small YAML text files; check that this member is the descriptor you meant',
      });
      return undefined;
    }
    const parsed = parseYaml(text, path);
    if (!parsed.ok) {
      this.findings.push(parsed.finding);
      return undefined;
    }
    if (!isMapping(parsed.doc)) {
      this.add({
        code: 'vnfd-structure',
        file: path,
        line: 1,
        message: 'is not a TOSCA service template (expected a mapping with tosca_definitions_version)',
        hint: 'start the file with "tosca_definitions_version: tosca_simple_yaml_1_2"',
      });
      return undefined;
    }
    const doc = parsed.doc;
    if (typeof doc.tosca_definitions_version !== 'string') {
      this.add({
        code: 'tosca-version-missing',
        file: path,
        line: 1,
        message: 'has no tosca_definitions_version',
        hint: 'add "tosca_definitions_version: tosca_simple_yaml_1_2" (the version SOL001 and Tacker use)',
      });
    }
    const source = { path, text, doc };
    this.sources.set(path, source);
    return source;
  }

  /** Returns the package path to read next, or undefined when there is nothing (more) to read. */
  private resolveImport(source: SourceFile, ref: string, line: number | undefined, imp: VnfdImport): string | undefined {
    const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(ref);
    const local = isUrl ? undefined : resolveMember(source.path, ref);
    if (local && this.pkg.has(local)) {
      imp.resolved = local;
      return local;
    }
    if (isSol001TypeFile(ref)) {
      imp.builtin = true;
      return undefined;
    }
    if (!isUrl && local === undefined) {
      this.add({
        code: 'import-escapes-package',
        file: source.path,
        line,
        message: `import ${ref} points outside the package`,
        hint: 'imports are resolved relative to the importing file and must stay inside the package; copy the file into Definitions/ and import it by its relative path',
      });
      return undefined;
    }
    this.add({
      code: 'import-unresolved',
      file: source.path,
      line,
      message: isUrl ? `import ${ref} is a URL, and vnfm never fetches anything while reading a package` : `import ${ref} resolves to ${local}, which is not in the package`,
      hint: isUrl
        ? `ship the file inside the package and import it by relative path (only the ETSI SOL001 type files, v${SOL001_VERSION} and later, are supplied by vnfm)`
        : 'add the file to the package, or fix the path: imports are relative to the importing file',
    });
    return undefined;
  }
}

/** `imports:` entries as written: strings, `{file: x}`, or TOSCA 1.2's `{name: {file: x}}`. */
function importRefs(source: SourceFile): Array<{ ref: string; line?: number }> {
  const raw = source.doc.imports;
  if (raw === undefined || raw === null) return [];
  const items = Array.isArray(raw) ? raw : [raw];
  const refs: Array<{ ref: string; line?: number }> = [];
  const lines = source.text.split(/\r?\n/);
  const importsLine = lineOf(source.text, ['imports']);
  for (const item of items) {
    let ref: string | undefined;
    if (typeof item === 'string') ref = item;
    else if (isMapping(item)) {
      if (typeof item.file === 'string') ref = item.file;
      else {
        const inner = Object.values(item)[0];
        ref = isMapping(inner) && typeof inner.file === 'string' ? inner.file : undefined;
      }
    }
    if (ref === undefined) continue;
    const idx = lines.findIndex((l, i) => i + 1 >= (importsLine ?? 1) && l.includes(ref));
    refs.push({ ref, line: idx >= 0 ? idx + 1 : importsLine });
  }
  return refs;
}
