import picomatch from 'picomatch';

/** Characters that make a path segment a pattern rather than a name (picomatch's glob syntax). */
const WILDCARD = /[*?[\]{}()!+@]/;

/** Why a path glob is refused, or null when it is one Baton reserves: relative, `/`-separated, no `.`/`..` segments. */
export function globProblem(glob: string): string | null {
  if (glob.startsWith('/')) return 'must be relative to the repository root (no leading /)';
  if (glob.includes('\\')) return 'must use / as the separator (no backslash)';
  if (glob.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) return 'must not have empty, . or .. segments';
  return null;
}

/** The segments before the first one holding a wildcard: every path the glob matches starts with them. */
function literalPrefix(glob: string): { segments: string[]; literal: boolean } {
  const all = glob.split('/');
  const first = all.findIndex((segment) => WILDCARD.test(segment));
  return first === -1 ? { segments: all, literal: true } : { segments: all.slice(0, first), literal: false };
}

function matches(glob: string, path: string): boolean {
  // dot: `src/**` covers `src/.env` too: a reservation of a directory means all of it.
  return picomatch(glob, { dot: true })(path);
}

/**
 * Whether some path may match both globs (spec/collaboration.md, "Reservations"). A literal path
 * against a glob is decided exactly, by picomatch. Two globs are compared conservatively by their
 * literal prefixes (the segments before the first wildcard): they overlap unless neither prefix is
 * a prefix of the other, so `src/*.ts` and `docs/**` are apart, while `src/*.ts` and `src/*.md`
 * count as overlapping. Never answers "apart" for globs that share a path.
 */
export function globsOverlap(a: string, b: string): boolean {
  const pa = literalPrefix(a);
  const pb = literalPrefix(b);
  if (pa.literal && pb.literal) return a === b;
  if (pa.literal) return matches(b, a);
  if (pb.literal) return matches(a, b);
  const shorter = Math.min(pa.segments.length, pb.segments.length);
  for (let i = 0; i < shorter; i++) if (pa.segments[i] !== pb.segments[i]) return false;
  return true;
}

/** Whether a reservation's glob covers one file path exactly (as written, or matched by picomatch): what `baton guard` asks of each staged path. */
export function globCoversPath(glob: string, path: string): boolean {
  return glob === path || matches(glob, path);
}

/** The pairs `[ours, theirs]` of two glob sets that overlap. */
export function overlappingGlobs(ours: readonly string[], theirs: readonly string[]): [string, string][] {
  return ours.flatMap((a) => theirs.filter((b) => globsOverlap(a, b)).map((b): [string, string] => [a, b]));
}
