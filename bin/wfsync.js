#!/usr/bin/env -S node --max-old-space-size=1024 --max-semi-space-size=8 --single-threaded-gc
// The CLI runs in this process (bin/load.js): the `tsx` command would run it as a child and SIGKILL it when it has
// not acknowledged a Ctrl-C within 60 ms, which a process busy writing a page cannot promise, and the shutdown
// would be cut short.
//
// The heap limit is given here because V8 grows its heap by a factor of the live set that depends on the limit:
// with the default limit (a quarter of the machine's memory) it lets garbage grow to several times the live set
// before collecting it.
// The young generation's semispaces are held below V8's default, which trades a little CPU for memory: a first
// `sync --once` at `large` stays under its memory bound (bench/memory.ts); smaller ones cost CPU a page
// (bench/floor.ts) and the budget's use by many companies (bench/tenants.ts).
// The collector runs on this thread alone: its helper threads compete with Postgres for the machine's cores and
// shortened no pause. docs/performance.md has the measurements behind each flag.
import { loadCli } from './load.js';

await loadCli();
