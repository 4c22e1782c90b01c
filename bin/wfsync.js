#!/usr/bin/env -S node --max-old-space-size=1024 --max-semi-space-size=4
// The CLI runs in this process (bin/load.js): the `tsx` command would run it as a child and SIGKILL it when it has
// not acknowledged a Ctrl-C within 60 ms, which a process busy writing a page cannot promise, and the shutdown
// would be cut short.
//
// The heap limit is given here because V8 grows its heap by a factor of the live set that depends on the limit:
// with the default limit (a quarter of the machine's memory, several GB) it lets garbage grow to four times the
// live set before collecting it; with 1 GB, to about 1.6 times. `sync --once` at `small` (about 50 MB live):
// peak RSS 298 MB without it, 204 MB with it, for 4% more CPU (bench/backfill.ts, bench/memory.ts).
// The young generation's semispaces are held to 4 MB (16 by default): a page's garbage dies young either way, and
// `sync --once` at `large` peaks at 247 MB instead of 278, for CPU within the runs' noise (bench/memory.ts).
import { loadCli } from './load.js';

await loadCli();
