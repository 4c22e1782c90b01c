import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { App } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';

describe('stopping the app', () => {
  it('a step that never stops does not hold back the next one, and the log names it', async () => {
    const lines: { msg?: string; step?: string }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string; step?: string }) });
    const app = new App(loadConfig({}), log);
    const stopped: string[] = [];
    app.onStop('warehouse', () => void stopped.push('warehouse'));
    app.onStop('stuck', () => new Promise<void>(() => {}));
    const started = Date.now();
    await app.stop();
    expect(stopped).toEqual(['warehouse']);
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(lines).toContainEqual(expect.objectContaining({ step: 'stuck', msg: 'a step did not stop in time; going on' }));
  }, 20_000);
});
