import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadStdioConfig } from './config.ts';
import { generateToken } from './tokens.ts';

/**
 * README's configuration table is the operator's only list of variables: every variable the
 * configuration reads is in it, nothing else is, and each default it shows is the default.
 */

/** Read by the command line or the test harness, not by `loadConfig`. */
const READ_ELSEWHERE = ['BATON_TEST_DATABASE_URL', 'BATON_CONFIG', 'NODE_COMPILE_CACHE'];

async function documentedTable(): Promise<Map<string, string>> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split('\n## Configuration\n')[1]?.split('\n## ')[0] ?? '';
  const table = new Map<string, string>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const [names = '', defaultValue = ''] = row.slice(1).split(' | ');
    for (const [, name] of names.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) table.set(name ?? '', defaultValue.trim());
  }
  return table;
}

/** The variables `config.ts` declares (its two schemas). */
async function declaredVariables(): Promise<Set<string>> {
  const source = await readFile(new URL('./config.ts', import.meta.url), 'utf8');
  const schemas = [...source.matchAll(/= z\.object\(\{\n([\s\S]*?)\n\}\);/g)].map((m) => m[1] ?? '').join('\n');
  return new Set([...schemas.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1] ?? ''));
}

describe('the README configuration table', () => {
  it('lists exactly the variables the configuration reads', async () => {
    const documented = [...(await documentedTable()).keys()].filter((name) => !READ_ELSEWHERE.includes(name));
    const declared = [...(await declaredVariables())];
    expect(declared.length).toBeGreaterThan(50);
    expect(declared.filter((name) => !documented.includes(name)), 'read by config.ts, missing from README').toEqual([]);
    expect(documented.filter((name) => !declared.includes(name)), 'in README, not read by config.ts').toEqual([]);
  });

  it('shows each default as the default', async () => {
    // Tracing on, so the OTEL_* defaults show in the configuration too.
    const base = { OTEL_TRACES_EXPORTER: 'otlp' };
    const defaults = loadConfig(base);
    const literal = [...(await documentedTable())].filter(([name, value]) => /^`[^`<…]+`$/.test(value) && name !== 'BATON_URL');
    expect(literal.length).toBeGreaterThan(40);
    for (const [name, value] of literal) {
      expect(loadConfig({ ...base, [name]: value.slice(1, -1) }), `${name}=${value}`).toEqual(defaults);
    }
    expect(`\`${loadStdioConfig({ BATON_TOKEN: generateToken() }).url}\``).toBe((await documentedTable()).get('BATON_URL'));
  });
});

describe('a bad value', () => {
  it('is named with what it must be and what was given, in an operator’s words, and an example', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal({ PORT: 'abc' })).toBe('Invalid configuration: PORT: must be a number, got "abc" (example: PORT=3000)');
    expect(refusal({ PORT: '70000' })).toBe('Invalid configuration: PORT: must be at most 65535, got "70000" (example: PORT=3000)');
    expect(refusal({ BATON_DB_POOL_SIZE: '2.5' })).toBe('Invalid configuration: BATON_DB_POOL_SIZE: must be a whole number, got "2.5" (example: BATON_DB_POOL_SIZE=10)');
    expect(refusal({ BATON_DB_POOL_SIZE: '-3' })).toBe('Invalid configuration: BATON_DB_POOL_SIZE: must be at least 1, got "-3" (example: BATON_DB_POOL_SIZE=10)');
    // A secret's value is never repeated.
    expect(refusal({ BATON_SECRET_KEY: 'ab' })).toBe('Invalid configuration: BATON_SECRET_KEY: must be at least 32 characters (e.g. 32 random bytes as hex) (example: BATON_SECRET_KEY=the output of `openssl rand -hex 32`)');
    expect(refusal({ BATON_LOG_LEVEL: 'loud' })).toBe('Invalid configuration: BATON_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud" (example: BATON_LOG_LEVEL=info)');
  });
});

describe('BATON_WEBHOOK_ALLOW_PRIVATE', () => {
  it('keeps 0 and 1 (and unset: 0) as they were, and reads a list of CIDRs, addresses and host names', () => {
    expect(loadConfig({}).webhookAllowPrivate).toBe(false);
    expect(loadConfig({ BATON_WEBHOOK_ALLOW_PRIVATE: '0' }).webhookAllowPrivate).toBe(false);
    expect(loadConfig({ BATON_WEBHOOK_ALLOW_PRIVATE: '1' }).webhookAllowPrivate).toBe(true);
    expect(loadConfig({ BATON_WEBHOOK_ALLOW_PRIVATE: '10.0.0.0/8, Hooks.Internal ,fd00::/8,192.168.1.7,chat.corp.' }).webhookAllowPrivate).toEqual({
      networks: ['10.0.0.0/8', 'fd00::/8', '192.168.1.7/32'],
      hosts: ['hooks.internal', 'chat.corp'],
    });
  });

  it('refuses a malformed entry, naming it', () => {
    for (const [value, entry] of [['10.0.0.0/33', '10.0.0.0/33'], ['10.0.0.0/8,', ''], ['hooks.internal/8', 'hooks.internal/8'], ['300.1.1.1/8', '300.1.1.1/8'], ['fd00::/129', 'fd00::/129'], ['http://hooks.internal', 'http://hooks.internal'], ['10.0.0.0/8/1', '10.0.0.0/8/1']]) {
      expect(() => loadConfig({ BATON_WEBHOOK_ALLOW_PRIVATE: value }), value).toThrow(
        `Invalid configuration: BATON_WEBHOOK_ALLOW_PRIVATE: ${JSON.stringify(entry)} is neither a CIDR (10.0.0.0/8, fd00::/8), an IP address nor a host name; give 0, 1, or a comma-separated list of those (example: BATON_WEBHOOK_ALLOW_PRIVATE=10.0.0.0/8,hooks.internal)`,
      );
    }
  });
});
