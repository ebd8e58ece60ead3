/**
 * Just enough of the Dockerfile and .dockerignore formats to check what the linter can't know:
 * the stages and their instructions, and which files `docker build .` sends.
 */

/** One instruction: its keyword (upper case) and the rest of its line(s), continuations joined. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** A build stage: its `FROM` arguments and the instructions after it. */
export interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** The stages of a Dockerfile (comments and parser directives dropped, `\` continuations joined). */
export function dockerStages(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue;
    const line = raw.trimEnd();
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    if (whole !== '') logical.push(whole);
  }
  const stages: { from: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const l of logical) {
    const m = /^(\S+)\s*(.*)$/s.exec(l)!;
    const keyword = m[1]!.toUpperCase();
    const args = m[2]!.replace(/\s+/g, ' ');
    if (keyword === 'FROM') {
      const name = / AS (\S+)$/i.exec(args)?.[1];
      stages.push({ from: args.replace(/ AS \S+$/i, ''), name, instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push({ keyword, args });
    }
  }
  return stages;
}

/** A `.dockerignore` rule as Docker applies it: the last rule that matches a path decides. */
interface IgnoreRule {
  readonly exclude: boolean;
  readonly re: RegExp;
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` is any number of folders (none too); a trailing `**` anything.
      if (glob[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // A rule naming a folder leaves out everything in it.
  return new RegExp(`^${re}(?:/.*)?$`);
}

/** The rules of a `.dockerignore` text (comments and blank lines skipped, leading `/` dropped). */
export function dockerignoreRules(text: string): IgnoreRule[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const exclude = !l.startsWith('!');
      const glob = (exclude ? l : l.slice(1)).trim().replace(/^\/+/, '').replace(/\/+$/, '');
      return { exclude, re: globToRegExp(glob) };
    });
}

/** Whether `docker build` leaves the file at `path` (relative to the context) out. */
export function isDockerIgnored(rules: readonly IgnoreRule[], path: string): boolean {
  let ignored = false;
  for (const r of rules) if (r.re.test(path)) ignored = r.exclude;
  return ignored;
}
