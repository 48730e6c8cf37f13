import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The parts of a V8 `.cpuprofile` (what `node --cpu-prof` writes) read here. */
interface CpuProfile {
  /** Microseconds; the first sample is `timeDeltas[0]` after `startTime`. */
  startTime: number;
  endTime: number;
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * Self time of the newest profile in `dir` over its last `seconds` (the measured run: the server
 * stops right after it), as text: where the time goes by package or source folder, and the
 * busiest functions, in percent of non-idle samples and in milliseconds per request.
 */
export async function summariseProfile(dir: string, seconds: number, requests: number, top = 15): Promise<string> {
  const newest = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort().at(-1);
  if (!newest) return `no .cpuprofile in ${dir}`;
  const profile = JSON.parse(await readFile(join(dir, newest), 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  // Half a second of slack covers the shutdown after the run; it is mostly idle and so not counted.
  const from = profile.endTime - (seconds + 0.5) * 1e6;
  let at = profile.startTime;
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const frame = frames.get(id);
    const micros = profile.timeDeltas[i] ?? 0;
    at += micros;
    if (at < from || !frame || frame.functionName === '(idle)') return;
    busy += micros;
    const where = place(frame.url, frame.functionName);
    const name = `${frame.functionName || '(anonymous)'} ${frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ''}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    byPlace.set(where, (byPlace.get(where) ?? 0) + micros);
  });
  const percent = (micros: number) => `${((100 * micros) / Math.max(busy, 1)).toFixed(1).padStart(5)}%`;
  const perRequest = (micros: number) => `${(micros / 1000 / Math.max(requests, 1)).toFixed(3).padStart(6)} ms/req`;
  const ranked = (map: Map<string, number>, limit: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, micros]) => `  ${percent(micros)} ${perRequest(micros)}  ${name}`);
  return [
    `${join(dir, newest)}: ${(busy / 1e6).toFixed(1)} s busy in the last ${seconds} s, ${perRequest(busy)}`,
    'self time by place:',
    ...ranked(byPlace, 12),
    `top ${top} functions by self time:`,
    ...ranked(byFunction, top),
  ].join('\n');
}

function shortUrl(url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith(REPO) ? path.slice(REPO.length) : path;
}

/** `node_modules/<package>`, `src/<folder>`, `node:internals`, or V8's own pseudo-frames. */
function place(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internals';
  const path = shortUrl(url);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return `node_modules/${pkg[1]}`;
  const local = /^(src|bench)\/([^/]+)/.exec(path);
  return local ? `${local[1]}/${local[2]}` : path;
}
