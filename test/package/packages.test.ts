import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { operations } from '../../src/operations/index.ts';
import { generateToken } from '../../src/tokens.ts';
import { freePort, runNode } from '../cli/run-baton.ts';
import { signIn } from '../web/browser.ts';
import { installInto, type Packed, packBoth, type Process, REPO, run, sizeOf, start } from './packed.ts';

/**
 * The two packages as a user gets them: `npm pack`ed (their prepack builds them), each installed
 * into a fresh project outside the checkout, the server started there with `npx baton-tasks serve`
 * on PGlite, the documented agent loop compiled with strict TypeScript against the packed client
 * and run against it, the web app opened in Chromium.
 */
let packed: Packed;
let serverProject: string;
let clientProject: string;
let served: Process;
let base: string;
const token = generateToken();

beforeAll(async () => {
  packed = await packBoth();
  [serverProject, clientProject] = await Promise.all([installInto('baton-packed-server-', [packed.server]), installInto('baton-packed-client-', [packed.client])]);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // Exactly what the README tells a new user to run, in the folder the package was installed into.
  served = start('npx', ['baton-tasks', 'serve'], { cwd: serverProject, env: { PORT: String(port), BATON_BOOTSTRAP_TOKEN: token, BATON_LOG_LEVEL: 'warn' } });
  await served.printed(/Baton is serving at/);
}, 600_000);

afterAll(async () => {
  await served?.stop();
  await Promise.all([serverProject, clientProject].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })));
  await packed?.remove();
});


describe('the server package', () => {
  it('ships compiled JavaScript, the built web app, the migrations and the served spec, and no TypeScript source', async () => {
    const files = (await run('tar', ['tzf', packed.server], { cwd: REPO })).stdout.split('\n');
    for (const file of ['package/bin/baton.js', 'package/dist/cli/baton.js', 'package/dist/main.js', 'package/web/dist/index.html', 'package/migrations/0001_init.sql', 'package/spec/index.md']) expect(files).toContain(file);
    expect(files.filter((file) => file.endsWith('.ts'))).toEqual([]);
    expect(await sizeOf(packed.server)).toBeLessThan(2_000_000);
  });

  it('serves the API and the web app from the installed package (npx baton-tasks serve, PGlite)', async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toMatchObject({ status: 'ok' });
    const page = await fetch(base);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module"');
  });

  it('runs the CLI verbs from the installed bin', async () => {
    const bin = join(serverProject, 'node_modules/.bin/baton');
    const version = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect((await runNode([bin, '--version'])).stdout.trim()).toBe(version.version);
    const env = { BATON_URL: base, BATON_TOKEN: token };
    const created = await runNode([bin, 'tasks', 'create', 'packed CLI task', '--json'], env);
    expect(created.stderr).toBe('');
    const listed = await runNode([bin, 'tasks', 'list', '--json'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('packed CLI task');
  });

  it('says in one line which Node it needs when started by an older one', async (ctx) => {
    const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } };
    const floor = Number(/^>=(\d+)$/.exec(pkg.engines.node)?.[1]);
    expect(await readFile(join(REPO, 'bin/baton.js'), 'utf8')).toContain(`const NODE_MAJOR = ${floor};`);
    const old = '/usr/bin/node';
    if (!existsSync(old)) return ctx.skip();
    const { stdout: oldVersion } = await run(old, ['-p', 'process.versions.node'], { cwd: REPO });
    if (Number(oldVersion.split('.')[0]) >= floor) return ctx.skip();
    const refused = await start(old, [join(serverProject, 'node_modules/.bin/baton'), 'tasks', 'list'], { cwd: serverProject }).outcome;
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(`baton needs Node.js ${floor} or newer; this is Node.js ${oldVersion.trim()} (${old}).\n`);
  });
});

/** A project's tsconfig as strict as users make them, without allowImportingTsExtensions (nor skipLibCheck: the declarations are checked too). */
const STRICT_CONSUMER = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    // The example reads process.env: Node's types from the checkout (the project installs only the client).
    typeRoots: [join(REPO, 'node_modules/@types')],
    types: ['node'],
  },
  files: ['agent-loop.ts'],
};

describe('the client package', () => {
  it('ships ESM with declarations and has no runtime dependency', async () => {
    const files = (await run('tar', ['tzf', packed.client], { cwd: REPO })).stdout.split('\n');
    for (const file of ['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/operations.js']) expect(files).toContain(file);
    const pkg = JSON.parse(await readFile(join(clientProject, 'node_modules/baton-tasks-client/package.json'), 'utf8')) as { dependencies?: object };
    expect(pkg.dependencies ?? {}).toEqual({});
  });

  it('has a method for every operation of the registry, on the route the registry binds', async () => {
    const packedClient = (await import(pathToFileURL(join(clientProject, 'node_modules/baton-tasks-client/dist/index.js')).href)) as { createClient: (options: object) => object };
    const routes = new Map<string, string>();
    const walk = (node: object) => {
      for (const value of Object.values(node) as unknown[]) {
        if (typeof value === 'function' && 'operation' in value && 'method' in value && 'path' in value) routes.set(String(value.operation), `${String(value.method)} ${String(value.path)}`);
        else if (typeof value === 'object' && value !== null) walk(value);
      }
    };
    walk(packedClient.createClient({ baseUrl: 'http://unused.test', token: 'unused' }));
    expect(Object.fromEntries(routes)).toEqual(Object.fromEntries(operations.map((op) => [op.name, `${op.http.method} ${op.http.path}`])));
  });

  it('runs the documented agent loop, compiled with strict TypeScript, against the packed server', async () => {
    const baton = createClient({ baseUrl: base, token });
    const ids = [];
    for (const title of ['write the packed guide', 'check the packed guide']) ids.push((await baton.tasks.create({ title, labels: ['docs'] })).id);
    await copyFile(join(REPO, 'docs/examples/agent-loop.ts'), join(clientProject, 'agent-loop.ts'));
    await writeFile(join(clientProject, 'tsconfig.json'), JSON.stringify(STRICT_CONSUMER, null, 2));
    await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', clientProject], { cwd: clientProject });
    const { code, stdout, stderr } = await runNode([join(clientProject, 'agent-loop.js')], { BATON_URL: base, BATON_TOKEN: token });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const id of ids) {
      expect(stdout).toContain(`ready for review: ${id}`);
      expect(await baton.tasks.get({ id })).toMatchObject({ status: 'in_review' });
    }
  });

  it('runs the compiled loop on the oldest Node it supports (20) too', async (ctx) => {
    const old = '/usr/bin/node';
    if (!existsSync(old) || !(await run(old, ['--version'], { cwd: REPO })).stdout.startsWith('v20.')) return ctx.skip();
    const { id } = await createClient({ baseUrl: base, token }).tasks.create({ title: 'on Node 20', labels: ['docs'] });
    const loop = await start(old, [join(clientProject, 'agent-loop.js')], { cwd: clientProject, env: { BATON_URL: base, BATON_TOKEN: token } }).outcome;
    expect(loop.stderr).toBe('');
    expect(loop.stdout).toContain(`ready for review: ${id}`);
  });
});

describe('the web app of the server package', () => {
  let context: BrowserContext | undefined;
  let profile: string | undefined;
  afterAll(async () => {
    await context?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it('loads the board in Chromium', async () => {
    profile = await mkdtemp(join(tmpdir(), 'baton-chromium-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
    const { title } = await createClient({ baseUrl: base, token }).tasks.create({ title: 'shown on the packed board' });
    const page = await context.newPage();
    await page.goto(base);
    await signIn(page, token);
    await page.getByText(title).first().waitFor({ timeout: 15_000 });
  });

  it('runs the packed client in the page, as the server\'s own origin serves it', async () => {
    const dist = join(clientProject, 'node_modules/baton-tasks-client/dist/');
    if (!context) throw new Error('the board test launches the browser');
    const page = await context.newPage();
    // The client's files under the packed server's origin, so the page's Content-Security-Policy ('self') admits them.
    await page.route(`${base}/packed-client/**`, async (route) =>
      route.fulfill({ contentType: 'text/javascript', body: await readFile(join(dist, new URL(route.request().url()).pathname.replace('/packed-client/', ''))) }),
    );
    await page.goto(base);
    // As text: Vitest would rewrite an import() in a function's source to its own loader.
    const titles = await page.evaluate<string[]>(`(async () => {
      const { createClient } = await import('/packed-client/index.js');
      const baton = createClient({ baseUrl: ${JSON.stringify(base)}, token: ${JSON.stringify(token)} });
      await baton.tasks.create({ title: 'created in the browser' });
      return (await baton.tasks.list({ q: 'browser' })).data.map((task) => task.title);
    })()`);
    expect(titles).toContain('created in the browser');
  });
});
