import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { hostRotation, parsePostgresHosts } from './postgres-hosts.ts';

describe('parsePostgresHosts', () => {
  it('leaves a one-host URL as it is', () => {
    const url = 'postgres://baton:secret@db:5432/baton?sslmode=require';
    expect(parsePostgresHosts(url)).toEqual({ urls: [url], readWrite: false });
  });

  it('splits a libpq host list into one URL per host, keeping the user, database and other parameters', () => {
    expect(parsePostgresHosts('postgres://baton:s%40cret@db1:5432,db2:5433/baton?sslmode=require&target_session_attrs=read-write')).toEqual({
      urls: ['postgres://baton:s%40cret@db1:5432/baton?sslmode=require', 'postgres://baton:s%40cret@db2:5433/baton?sslmode=require'],
      readWrite: true,
    });
    expect(parsePostgresHosts('postgresql://db1,db2/baton')).toEqual({ urls: ['postgresql://db1/baton', 'postgresql://db2/baton'], readWrite: false });
    expect(parsePostgresHosts('postgres://db1/baton?target_session_attrs=primary')).toEqual({ urls: ['postgres://db1/baton'], readWrite: true });
  });

  it('refuses an attribute it does not follow and an empty host', () => {
    expect(() => parsePostgresHosts('postgres://db1,db2/baton?target_session_attrs=standby')).toThrow(/target_session_attrs=standby is not supported/);
    expect(() => parsePostgresHosts('postgres://db1,,db2/baton')).toThrow(/empty entry/);
  });
});

describe('hostRotation', () => {
  it('moves on from a failed host once, however many connections saw it fail, and wraps around', () => {
    const rotation = hostRotation(parsePostgresHosts('postgres://a,b,c/baton'));
    expect(rotation.current()).toBe(0);
    rotation.passOver(0);
    rotation.passOver(0);
    expect(rotation.current()).toBe(1);
    rotation.passOver(1);
    rotation.passOver(2);
    expect(rotation.current()).toBe(0);
  });
});

describe('DATABASE_URL with several hosts', () => {
  it('is accepted as it is, and an attribute Baton cannot follow is refused at start', () => {
    const url = 'postgres://baton@db1:5432,db2:5432/baton?target_session_attrs=read-write';
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://baton@db1,db2/baton?target_session_attrs=prefer-standby' })).toThrow(
      'Invalid configuration: DATABASE_URL: target_session_attrs=prefer-standby is not supported: use read-write (or primary) to follow the writable host, or any (example: DATABASE_URL=postgres://baton@127.0.0.1:5432/baton)',
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgres://baton@db 1:5432,db2/baton' })).toThrow('DATABASE_URL: Invalid URL');
  });
});
