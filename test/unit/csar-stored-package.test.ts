/**
 * The stored package is its zip alone: members read in place, and work
 * directories unpacked from it for what needs real files, removed when the
 * process ends (or by the next process, when it was killed).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCsar } from '../../src/csar/build.js';
import { openStoredZip, packagesDir, releaseWorkDirs, removeAbandoned, unpackedWorkDir } from '../../src/csar/stored-package.js';
import { findBaseHot } from '../../src/lcm/heat-files.js';
import { readPackageObjects } from '../../src/lcm/package-content.js';
import { bundleTestProgram } from '../support/bundle-test-program.js';

const samples = resolve(import.meta.dirname, '../../csar-samples');
let work: string;
let home: string;
let cnfZip: string;
let heatZip: string;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(relative(dir, join(d, e.name)).split('\\').join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vnfm-stored-'));
  home = join(work, 'home');
  mkdirSync(packagesDir(home), { recursive: true });
  cnfZip = join(work, 'cnf.zip');
  heatZip = join(work, 'heat.zip');
  await buildCsar(join(samples, 'basic-cnf/package'), cnfZip);
  await buildCsar(join(samples, 'heat-vnf/package'), heatZip);
});

afterAll(async () => {
  await releaseWorkDirs();
  rmSync(work, { recursive: true, force: true });
});

describe('a stored zip read in place', () => {
  it('gives the definition files and the Base HOT as the unpacked tree has them', async () => {
    const files = await openStoredZip(cnfZip);
    const members = files.list();
    await files.close();
    expect(members).toEqual(filesUnder(join(samples, 'basic-cnf/package')));

    const fromZip = await readPackageObjects(cnfZip, ['Files/kubernetes/deployment_vdu1.yaml', 'Files/kubernetes/service.yaml']);
    const fromTree = await readPackageObjects(join(samples, 'basic-cnf/package'), ['Files/kubernetes/deployment_vdu1.yaml', 'Files/kubernetes/service.yaml']);
    expect(fromZip).toEqual(fromTree);
    expect(fromZip.objects.map((o) => o.kind)).toEqual(['Deployment', 'Service']);

    const flavour = readdirSync(join(samples, 'heat-vnf/package/BaseHOT'))[0]!;
    const baseHot = async (path: string) => {
      const files = await openStoredZip(path);
      try {
        return await findBaseHot(files, flavour);
      } finally {
        await files.close();
      }
    };
    const zipHot = await baseHot(heatZip);
    expect(zipHot?.templatePath).toBe(`BaseHOT/${flavour}/heat_vnf.yaml`);
    expect(zipHot).toEqual(await baseHot(join(samples, 'heat-vnf/package')));
  });

  it('a definition file the package lacks is a validation error naming it', async () => {
    await expect(readPackageObjects(cnfZip, ['Files/kubernetes/nope.yaml'])).rejects.toThrow(/Files\/kubernetes\/nope\.yaml/);
  });
});

describe('work directories', () => {
  it('unpack the members under a prefix with their bytes, once per process, and go when released', async () => {
    const defs = await unpackedWorkDir(home, cnfZip, 'Definitions');
    expect(await unpackedWorkDir(home, cnfZip, 'Definitions')).toBe(defs);
    expect(filesUnder(defs)).toEqual(filesUnder(join(samples, 'basic-cnf/package')).filter((p) => p.startsWith('Definitions/')));
    for (const p of filesUnder(defs)) expect(readFileSync(join(defs, p)).equals(readFileSync(join(samples, 'basic-cnf/package', p)))).toBe(true);

    const all = await unpackedWorkDir(home, cnfZip);
    expect(all).not.toBe(defs);
    expect(filesUnder(all)).toEqual(filesUnder(join(samples, 'basic-cnf/package')));
    expect(readdirSync(packagesDir(home)).filter((n) => n.startsWith('.work-'))).toHaveLength(2);

    await releaseWorkDirs();
    expect(existsSync(defs)).toBe(false);
    expect(existsSync(all)).toBe(false);
    expect(readdirSync(packagesDir(home))).toEqual([]);
  });

  it('are removed when the process exits, and those of a killed process by the next one', async () => {
    const entry = join(work, 'unpack-program.ts');
    writeFileSync(
      entry,
      `import { unpackedWorkDir } from ${JSON.stringify(resolve(import.meta.dirname, '../../src/csar/stored-package.ts'))};
       const [home, zip, end] = process.argv.slice(2);
       unpackedWorkDir(home!, zip!).then((dir) => {
         console.log(dir);
         if (end === 'kill') process.kill(process.pid, 'SIGKILL');
       });`,
    );
    const program = await bundleTestProgram(entry);
    const exited = spawnSync(process.execPath, [program, home, cnfZip], { encoding: 'utf8' });
    expect(exited.status, exited.stderr).toBe(0);
    expect(exited.stdout.trim()).toMatch(/\.work-\d+-/);
    expect(existsSync(exited.stdout.trim())).toBe(false);

    const killed = spawnSync(process.execPath, [program, home, cnfZip, 'kill'], { encoding: 'utf8' });
    expect(killed.signal).toBe('SIGKILL');
    const left = readdirSync(packagesDir(home)).filter((n) => n.startsWith('.work-'));
    expect(left).toHaveLength(1);
    expect(filesUnder(join(packagesDir(home), left[0]!))).toEqual(filesUnder(join(samples, 'basic-cnf/package')));
    await removeAbandoned(home);
    expect(readdirSync(packagesDir(home))).toEqual([]);
  });
});
