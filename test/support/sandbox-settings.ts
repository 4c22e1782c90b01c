import type { RunningSandbox } from '../../src/sandbox/index.ts';

/** The settings that point a wfsync process at a sandbox: its URL, key, form ids and run-log type ids. */
export function sandboxSettings(sandbox: RunningSandbox): Record<string, string> {
  return {
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    WFS_FORM_IDS: sandbox.data.formIds().join(','),
    WFS_RUN_TYPE_IDS: sandbox.data.runTypeIds().join(','),
  };
}
