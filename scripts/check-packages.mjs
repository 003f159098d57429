#!/usr/bin/env node
/**
 * Checks the packages as a user gets them: packs every workspace package (pnpm rewrites `workspace:`
 * dependencies to versions), installs the tarballs into an empty npm project in a temp dir, and there
 *   - checks each tarball's contents (dist with ESM, CJS and both kinds of declarations; no sources),
 *   - imports @syncopate/core as ESM and requires it as CJS, and compiles ag-gemm through each,
 *   - type-checks an ESM (.mts) and a CJS (.cts) consumer with TypeScript's node16 resolution,
 *   - runs the installed `syncopate` executable: `compile` always; `run` (a small ag-gemm on the
 *     WebGPU adapter) unless SYNCOPATE_SKIP_WEBGPU=1.
 * Needs the packages built (`pnpm build`) and npm's registry for the third-party dependencies.
 * Usage: node scripts/check-packages.mjs [--keep]   (--keep leaves the temp dir for a look)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const started = Date.now();
const packagesDir = join(root, 'packages');
const packages = readdirSync(packagesDir)
  .filter((d) => existsSync(join(packagesDir, d, 'package.json')))
  .map((d) => ({ dir: join(packagesDir, d), manifest: JSON.parse(readFileSync(join(packagesDir, d, 'package.json'), 'utf8')) }))
  .filter((p) => !p.manifest.private);

let failures = 0;
const ok = (what) => console.log(`check-packages: ok    ${what}`);
const fail = (what) => {
  failures++;
  console.error(`check-packages: FAIL  ${what}`);
};
const run = (cmd, args, options = {}) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });

for (const { dir, manifest } of packages) {
  if (!existsSync(join(dir, 'dist', 'index.js'))) {
    console.error(`check-packages: ${manifest.name} is not built (${dir}/dist/index.js is missing): run pnpm build`);
    process.exit(1);
  }
}

const work = mkdtempSync(join(tmpdir(), 'syncopate-pack-'));
const tarballs = join(work, 'tarballs');
const project = join(work, 'project');
try {
  // 1. Pack. `pnpm pack` (not npm's) so that workspace: ranges become the packages' versions.
  for (const { dir } of packages) run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: dir });
  const files = readdirSync(tarballs).filter((f) => f.endsWith('.tgz')).sort();
  ok(`packed ${files.join(', ')}`);

  // 2. What each tarball holds and says.
  for (const { manifest } of packages) {
    const tgz = files.find((f) => f.startsWith(manifest.name.replace('@', '').replace('/', '-') + '-'));
    if (tgz === undefined) {
      fail(`${manifest.name}: no tarball`);
      continue;
    }
    const listing = run('tar', ['-tzf', join(tarballs, tgz)]).split('\n').filter(Boolean);
    const required = ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'package.json'];
    const missing = required.filter((f) => !listing.includes(`package/${f}`));
    const stray = listing.filter((f) => /^package\/(src|test)\//.test(f) || f.endsWith('.test.js'));
    const packed = JSON.parse(run('tar', ['-xzOf', join(tarballs, tgz), 'package/package.json']));
    const workspaceRanges = Object.entries({ ...packed.dependencies, ...packed.peerDependencies })
      .filter(([, range]) => String(range).startsWith('workspace:'))
      .map(([name]) => name);
    const fields = ['exports', 'engines', 'sideEffects', 'types'].filter((f) => packed[f] === undefined);
    const exp = packed.exports?.['.'];
    const conditions = exp && exp.import?.types && exp.import?.default && exp.require?.types && exp.require?.default;
    if (missing.length) fail(`${manifest.name}: tarball lacks ${missing.join(', ')}`);
    else if (stray.length) fail(`${manifest.name}: tarball holds sources or tests: ${stray.slice(0, 5).join(', ')}`);
    else if (workspaceRanges.length) fail(`${manifest.name}: workspace: ranges left in ${workspaceRanges.join(', ')}`);
    else if (fields.length) fail(`${manifest.name}: package.json has no ${fields.join(', ')}`);
    else if (!conditions) fail(`${manifest.name}: exports["."] needs import and require, each with types and default`);
    else ok(`${manifest.name}: ${listing.length} files, exports import+require with types, engines ${JSON.stringify(packed.engines)}`);
  }

  // 3. An empty npm project that installs every tarball (npm, as a user would: no pnpm, no workspace).
  run('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'syncopate-consumer', version: '0.0.0', private: true }, null, 2));
  const npmEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  const t0 = Date.now();
  run('npm', ['install', '--no-package-lock', '--loglevel=error', ...files.map((f) => join(tarballs, f))], { cwd: project, env: npmEnv });
  ok(`npm install of the tarballs into an empty project (${((Date.now() - t0) / 1000).toFixed(1)} s)`);

  // 4. ESM and CJS: compile is a function, and a real workload compiles and lowers to WGSL.
  const body = (mod) => `
    const core = ${mod};
    if (typeof core.compile !== 'function') throw new Error('compile is ' + typeof core.compile);
    const w = core.getWorkload('ag-gemm');
    const o = { ranks: 2, shape: { m: 64, n: 64, k: 32 }, dtype: 'f32' };
    const { kernel, plan } = w.build(o);
    const either = core.compile(kernel, plan);
    if (either._tag !== 'Right') throw new Error('compile failed: ' + JSON.stringify(either.left));
    const compiled = core.compileOrThrow(kernel, plan);
    const wgsl = core.emitWgsl(compiled);
    if (!wgsl.includes('@compute')) throw new Error('no @compute entry point in the WGSL');
    console.log(compiled.pipeline + ' -> ' + wgsl.length + ' chars of WGSL');`;
  const esm = run('node', ['--input-type=module', '-e', `import * as c from '@syncopate/core';${body('c')}`], { cwd: project });
  ok(`ESM  import { compile } from '@syncopate/core': ${esm.trim()}`);
  const cjs = run('node', ['--input-type=commonjs', '-e', body("require('@syncopate/core')")], { cwd: project });
  ok(`CJS  require('@syncopate/core'): ${cjs.trim()}`);
  for (const { manifest } of packages) {
    const esmKeys = run('node', ['--input-type=module', '-e', `import * as m from '${manifest.name}'; console.log(Object.keys(m).length)`], { cwd: project }).trim();
    const cjsKeys = run('node', ['-e', `console.log(Object.keys(require('${manifest.name}')).length)`], { cwd: project }).trim();
    if (esmKeys !== cjsKeys || esmKeys === '0') fail(`${manifest.name}: ESM has ${esmKeys} exports, CJS ${cjsKeys}`);
    else ok(`${manifest.name}: ESM and CJS both export ${esmKeys} names`);
  }

  // The runtime's install script built the host-copy addon, and both builds find it beside their dist/.
  const copyKind = (mod) => `const { hostCopier } = ${mod}; const h = hostCopier(); console.log(h.copier.kind + (h.why ? ' (' + h.why + ')' : ''));`;
  const kinds = [
    run('node', ['--input-type=module', '-e', `import * as r from '@syncopate/runtime'; ${copyKind('r')}`], { cwd: project }).trim(),
    run('node', ['--input-type=commonjs', '-e', copyKind("require('@syncopate/runtime')")], { cwd: project }).trim(),
  ];
  if (process.env.SYNCOPATE_REQUIRE_HOST_COPY_ADDON === '1' && kinds.some((k) => k !== 'native')) fail(`@syncopate/runtime: host copy ESM ${kinds[0]}, CJS ${kinds[1]}; the addon should have been built on install`);
  else ok(`@syncopate/runtime: host copy ESM ${kinds[0]}, CJS ${kinds[1]}`);

  // 5. Types as a TypeScript user sees them, through the exports map's types conditions.
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const consumer = `
    const { kernel, plan } = core.getWorkload('ag-gemm').build({ ranks: 2, shape: { m: 64, n: 64, k: 32 }, dtype: 'f32' });
    const compiled: core.CompiledKernel = core.compileOrThrow(kernel, plan);
    const order: core.RunOrder = 'chunk-arrival';
    export const text: string = compiled.pipeline + order;
    // @ts-expect-error: compile takes a kernel and a plan
    core.compile('not a module');`;
  writeFileSync(join(project, 'esm.mts'), `import * as core from '@syncopate/core';\n${consumer}\n`);
  writeFileSync(join(project, 'cjs.cts'), `import core = require('@syncopate/core');\n${consumer}\n`);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['esm.mts', 'cjs.cts'],
    }),
  );
  try {
    run('node', [tsc, '-p', 'tsconfig.json'], { cwd: project });
    ok('TypeScript (node16): an .mts importing and a .cts requiring @syncopate/core type-check');
  } catch (e) {
    fail(`TypeScript (node16) consumer:\n${e.stdout}${e.stderr}`);
  }

  // 6. The executable.
  const bin = join(project, 'node_modules', '.bin', 'syncopate');
  const ir = run(bin, ['compile', 'ag-gemm', '--ranks', '2', '--m', '64', '--n', '64', '--k', '32'], { cwd: project });
  ok(`syncopate compile ag-gemm: ${ir.split('\n').length} lines of IR`);
  if (process.env.SYNCOPATE_SKIP_WEBGPU === '1') {
    console.log('check-packages: skip  syncopate run (SYNCOPATE_SKIP_WEBGPU=1)');
  } else {
    const report = JSON.parse(run(bin, ['run', 'ag-gemm', '--ranks', '2', '--m', '64', '--n', '64', '--k', '32', '--json'], { cwd: project }));
    if (report.verified !== true) fail(`syncopate run ag-gemm: not verified: ${JSON.stringify(report)}`);
    else ok(`syncopate run ag-gemm on the installed webgpu (Dawn): verified, ${report.fusedMs.toFixed(2)} ms (${report.timing}), ${report.adapter}`);
  }
} catch (e) {
  fail(`${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
} finally {
  if (keep) console.log(`check-packages: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (failures > 0) {
  console.error(`check-packages: ${failures} check(s) failed (${seconds} s)`);
  process.exit(1);
}
console.log(`check-packages: all checks passed (${seconds} s)`);
