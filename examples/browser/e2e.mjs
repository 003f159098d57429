#!/usr/bin/env node
/**
 * End-to-end test of the browser example (`pnpm test:browser`): type-checks and builds the page with
 * Vite (the build fails if a Node-only module would reach the bundle), serves it, opens it in
 * Debian's Chromium headless (playwright-core; WebGPU on, which on a machine without a GPU is
 * Chromium's SwiftShader adapter), and checks that the page compiled ag-gemm and that the run on
 * navigator.gpu was verified against the CPU reference.
 *
 * If Chromium offers no WebGPU adapter, the compile in the page is still checked and the test says
 * plainly that the kernel did not run; it then fails only with SYNCOPATE_BROWSER_REQUIRE_RUN=1.
 *   CHROMIUM=/path/to/chromium   the browser (default /usr/bin/chromium: apt-get install chromium)
 *   CHROMIUM_ARGS='...'          Chromium's flags, replacing the default --enable-unsafe-webgpu
 *   E2E_QUERY='ranks=4&m=128'    the page's query (default below)
 * Needs the packages built (pnpm build).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { build, preview } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const configFile = `${here}vite.config.ts`;
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const args = process.env.CHROMIUM_ARGS?.split(/\s+/).filter(Boolean) ?? ['--enable-unsafe-webgpu'];
const query = process.env.E2E_QUERY ?? 'ranks=4&m=128&n=128&k=128&order=chunk-arrival&seed=1';
const requireRun = process.env.SYNCOPATE_BROWSER_REQUIRE_RUN === '1';
const log = (s) => console.log(`test:browser: ${s}`);
const started = Date.now();
const since = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

function fail(message) {
  console.error(`test:browser: FAIL ${message}`);
  process.exitCode = 1;
}

if (!existsSync(executablePath)) {
  console.error(`test:browser: no Chromium at ${executablePath}: apt-get install chromium, or set CHROMIUM=/path/to/it`);
  process.exit(1);
}
if (!existsSync(`${root}packages/core/dist/index.js`)) {
  console.error('test:browser: the packages are not built: run pnpm build');
  process.exit(1);
}

execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', `${here}tsconfig.json`], { stdio: 'inherit' });
log(`example type-checks (${since()})`);

const output = await build({ configFile, logLevel: 'warn' });
const chunks = (Array.isArray(output) ? output : [output]).flatMap((o) => o.output).filter((c) => c.type === 'chunk');
const external = chunks.flatMap((c) => [...c.imports, ...c.dynamicImports]).filter((id) => !chunks.some((c) => c.fileName === id));
if (external.length > 0) fail(`the bundle imports modules it does not contain: ${external.join(', ')}`);
const bytes = chunks.reduce((n, c) => n + c.code.length, 0);
log(`vite build: ${chunks.length} chunk(s), ${(bytes / 1024).toFixed(0)} KiB of JS, no Node-only imports (${since()})`);

const server = await preview({ configFile, logLevel: 'warn', preview: { port: 4173, strictPort: false, host: '127.0.0.1' } });
const base = server.resolvedUrls?.local[0];
let browser;
try {
  browser = await chromium.launch({ executablePath, headless: true, args });
  const page = await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  log(`Chromium ${browser.version()}, flags: ${args.join(' ') || '(none)'}`);

  await page.goto(`${base}?${query}`);
  await page.waitForFunction(() => ['done', 'no-webgpu', 'error'].includes(window.__syncopate?.state), null, { timeout: 300_000 });
  const result = await page.evaluate(() => window.__syncopate);

  if (result.compile === undefined) {
    fail(`the page did not compile: ${result.error ?? result.state}`);
  } else {
    const c = result.compile;
    log(`compiled in the page: ${c.pipeline}; ${c.irLines} lines of IR, ${c.wgslBytes} bytes of WGSL, ${c.compileMs.toFixed(1)} ms`);
    if (!(c.wgslBytes > 0 && c.irLines > 0)) fail('the compile summary is empty');
  }

  const noAdapter = result.state === 'no-webgpu' || /NoAdapterError|requestAdapter\(\) returned null/.test(result.error ?? '');
  if (result.state === 'done') {
    console.log(result.reportText);
    if (result.report.verified !== true || result.report.maxAbsError !== 0) fail('the run was not verified');
    else log(`ag-gemm ran on navigator.gpu and matched the CPU reference (${since()})`);
  } else if (noAdapter) {
    const what = `WebGPU did NOT run in this Chromium (${result.error ?? 'no navigator.gpu'}): only compile-in-the-browser was checked`;
    if (requireRun) fail(what);
    else log(`NOTE: ${what}`);
  } else {
    fail(`the page failed: ${result.error}`);
  }
  if (pageErrors.length > 0 && result.state !== 'done') log(`page errors: ${pageErrors.join(' | ')}`);
} finally {
  await browser?.close();
  await new Promise((resolve) => server.httpServer.close(resolve));
}
log(process.exitCode ? `failed (${since()})` : `passed (${since()})`);
