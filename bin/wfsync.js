#!/usr/bin/env -S node --max-old-space-size=1024 --max-semi-space-size=8 --single-threaded-gc
// The CLI runs in this process (bin/load.js): the `tsx` command would run it as a child and SIGKILL it when it has
// not acknowledged a Ctrl-C within 60 ms, which a process busy writing a page cannot promise, and the shutdown
// would be cut short.
//
// The heap limit is given here because V8 grows its heap by a factor of the live set that depends on the limit:
// with the default limit (a quarter of the machine's memory, several GB) it lets garbage grow to four times the
// live set before collecting it; with 1 GB, to about 1.6 times.
// The young generation's semispaces are held to 8 MB (16 by default), which trades CPU for memory. At 8 MB a first
// `sync --once` peaks at 235 to 246 MB at `large` (bench/memory.ts), under the 250 MB bound; at 16 MB it peaked at
// 247 MB. At 4 MB it spent about 7% more CPU per page at `medium` (bench/floor.ts), and two workers serving 100
// companies spent a fifth more, so that 40 to 50 of the keys used under 95% of their budget in the first minute
// (bench/tenants.ts).
// The collector runs on this thread alone: its helper threads compete with Postgres for the machine's cores and
// shortened no pause. Without them a first `sync --once` at `medium` spends 6 to 8% less CPU per page
// (bench/floor.ts, embedded and stock Postgres) and its scavenges pause it no longer in all.
import { loadCli } from './load.js';

await loadCli();
