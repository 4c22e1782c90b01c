#!/usr/bin/env node
// Loads the TypeScript CLI through tsx so a clone runs without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
