/**
 * The process's stderr as people see it. On a terminal, a live block at the bottom holds one line per running
 * stream; log lines and summaries are written above it, so the two never interleave. Off a terminal there is
 * no live block: every write goes straight through.
 */
export interface Console {
  /** True when stderr is a terminal and the live block is drawn. */
  readonly live: boolean;
  /** Writes text above the live block. */
  write(text: string): void;
  /** Replaces the live block's lines (nothing on a non-terminal). */
  setLive(lines: string[]): void;
}

interface Output {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export function createConsole(out: Output = process.stderr): Console {
  const live = !!out.isTTY;
  let block: string[] = [];
  let drawn = 0;
  const fit = (line: string) => (out.columns && line.length > out.columns - 1 ? line.slice(0, out.columns - 1) : line);
  // Up to the first drawn line, then clear to the end of the screen.
  const erase = () => (drawn > 0 ? `\r\x1b[${drawn}A\x1b[J` : '');
  const draw = () => {
    drawn = block.length;
    return block.map((l) => `${fit(l)}\n`).join('');
  };
  return {
    live,
    write(text) {
      if (!live || drawn === 0) return void out.write(text);
      out.write(erase() + text + draw());
    },
    setLive(lines) {
      if (!live) return;
      const before = erase();
      block = lines;
      out.write(before + draw());
    },
  };
}

/** The process-wide console on stderr. */
export const stderrConsole: Console = createConsole();
