/**
 * A PostgreSQL connection string naming several hosts, as libpq writes it:
 * `postgres://user@host1:5432,host2:5432/baton?target_session_attrs=read-write`. node-postgres
 * takes one host only, so Baton splits the list into one URL per host and opens each connection
 * on the host that last took one (docs/operations.md, "High availability").
 */
export interface PostgresHosts {
  /** One connection string per host, in the order given; the first is tried first. */
  readonly urls: readonly string[];
  /**
   * `target_session_attrs=read-write` (or `primary`): a host that answers read-only (a standby)
   * is passed over like one that refuses the connection.
   */
  readonly readWrite: boolean;
}

const SESSION_ATTRS = 'target_session_attrs';

/**
 * Splits `url` into one connection string per host; a URL with one host and no
 * `target_session_attrs` comes back as it is. Throws when a host list is malformed or the
 * attribute is one Baton does not support.
 */
export function parsePostgresHosts(url: string): PostgresHosts {
  const match = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!match) return { urls: [url], readWrite: false };
  const [, scheme = '', authority = '', rest = ''] = match;
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hosts = authority.slice(at + 1).split(',');
  const [path = '', query = ''] = splitQuery(rest);
  const parameters = new URLSearchParams(query);
  const attrs = parameters.get(SESSION_ATTRS);
  if (attrs !== null && !['any', 'read-write', 'primary'].includes(attrs)) {
    throw new Error(`${SESSION_ATTRS}=${attrs} is not supported: use read-write (or primary) to follow the writable host, or any`);
  }
  if (hosts.length === 1 && attrs === null) return { urls: [url], readWrite: false };
  if (hosts.some((host) => host === '')) throw new Error('the host list has an empty entry');
  parameters.delete(SESSION_ATTRS);
  const left = parameters.toString();
  return {
    urls: hosts.map((host) => `${scheme}${userinfo}${host}${path}${left ? `?${left}` : ''}`),
    readWrite: attrs === 'read-write' || attrs === 'primary',
  };
}

function splitQuery(rest: string): [string, string] {
  const hash = rest.indexOf('#');
  const withoutHash = hash === -1 ? rest : rest.slice(0, hash);
  const question = withoutHash.indexOf('?');
  return question === -1 ? [withoutHash, ''] : [withoutHash.slice(0, question), withoutHash.slice(question + 1)];
}

/** Which host new connections open on: the one that last worked, moved on when it fails. */
export interface HostRotation {
  readonly hosts: PostgresHosts;
  /** The index in `hosts.urls` a new connection opens on now. */
  current(): number;
  /**
   * The host at `index` refused a connection, answered read-only, or lost its session: new
   * connections go to the next host (unless another failure moved on already).
   */
  passOver(index: number): void;
}

export function hostRotation(hosts: PostgresHosts): HostRotation {
  let current = 0;
  return {
    hosts,
    current: () => current,
    passOver(index) {
      if (index === current) current = (current + 1) % hosts.urls.length;
    },
  };
}
