import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/** The example Alertmanager configuration: valid for amtool, and routing each severity of ops/alerts.yml. */

const FILE = fileURLToPath(new URL('../../ops/alertmanager.yml', import.meta.url));
const RULES = fileURLToPath(new URL('../../ops/alerts.yml', import.meta.url));
const amtool = spawnSync('sh', ['-c', 'command -v amtool']).status === 0;

/** The receivers amtool routes an alert with these labels to, as amtool prints them. */
const routed = (...labels: string[]) =>
  execFileSync('amtool', ['config', 'routes', 'test', `--config.file=${FILE}`, ...labels], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();

describe('ops/alertmanager.yml', () => {
  it('passes amtool check-config (where amtool is installed)', () => {
    if (!amtool) {
      // .ci/run installs Debian's prometheus-alertmanager package, which has amtool.
      expect(process.env.CI ?? '').toBe('');
      return;
    }
    expect(execFileSync('amtool', ['check-config', FILE], { encoding: 'utf8' })).toMatch(/SUCCESS/);
  });

  it('routes critical alerts to the on-call webhook and Slack, warnings to Slack, info by e-mail', () => {
    if (!amtool) {
      expect(process.env.CI ?? '').toBe('');
      return;
    }
    expect(routed('severity=critical', 'alertname=WfsyncStreamStale')).toBe('on-call,team-slack');
    expect(routed('severity=warning')).toBe('team-slack');
    expect(routed('severity=info')).toBe('team-email');
  });

  it('has a route for every severity the alert rules use', () => {
    const severities = new Set(
      (
        parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { labels: { severity: string } }[] }[] }
      ).groups.flatMap((g) => g.rules.map((r) => r.labels.severity)),
    );
    const routes = (parse(readFileSync(FILE, 'utf8')) as { route: { routes: { matchers: string[] }[] } }).route.routes
      .flatMap((r) => r.matchers)
      .join(' ');
    for (const s of severities) expect(routes).toMatch(new RegExp(`severity=~?"[^"]*\\b${s}\\b`));
  });
});
