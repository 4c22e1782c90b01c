#!/usr/bin/env -S node --max-old-space-size=1024 --max-semi-space-size=4 --single-threaded-gc
// The CLI runs in this process (bin/load.js): the `tsx` command would run it as a child and SIGKILL it when it has
// not acknowledged a Ctrl-C within 60 ms, which a process busy writing a page cannot promise, and the shutdown
// would be cut short.
//
// The heap limit is given here because V8 grows its heap by a factor of the live set that depends on the limit:
// with the default limit (a quarter of the machine's memory, several GB) it lets garbage grow to four times the
// live set before collecting it; with 1 GB, to about 1.6 times.
// The young generation's semispaces are held to 4 MB (16 by default).
// This trades CPU for memory: with 16 MB a first `sync --once` spends about a twentieth less CPU per page
// (bench/floor.ts) and peaks about 27 MB higher at `large` (bench/memory.ts), at the edge of the 250 MB bound:
// the memory bound is the one kept.
// The collector runs on this thread alone: its helper threads compete with Postgres for the machine's cores and
// shortened no pause. Without them a first `sync --once` at `medium` spends 6 to 8% less CPU per page
// (bench/floor.ts, embedded and stock Postgres), its scavenges pause it no longer in all, and it peaks at 232 MB
// at `large`.
import { loadCli } from './load.js';

await loadCli();
