import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Metrics } from '../../src/ops/metrics.ts';

const FILE = fileURLToPath(new URL('../../ops/alerts.yml', import.meta.url));

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const rules = (parse(readFileSync(FILE, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);

/** The series names this process exports, with a histogram's _bucket/_sum/_count. */
async function exported(): Promise<Set<string>> {
  const metrics = new Metrics({ queues: () => [], outbox: async () => ({}) });
  const names = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    names.add(m.name);
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${m.name}${s}`);
  }
  return names;
}

describe('ops/alerts.yml', () => {
  it('has a rule for each condition an operator is paged for, with a severity and a summary', () => {
    const uses = (metric: string, matcher?: RegExp) =>
      rules.some((r) => r.expr.includes(metric) && (!matcher || matcher.test(r.expr)));
    expect(uses('wfsync_stream_last_success_timestamp_seconds')).toBe(true);
    expect(uses('wfsync_rate_limited_total')).toBe(true);
    expect(uses('wfsync_stream_runs_total', /outcome="failed"/)).toBe(true);
    expect(uses('wfsync_push_in_doubt_changes')).toBe(true);
    expect(uses('wfsync_push_changes_total', /outcome="failed"/)).toBe(true);
    expect(uses('wfsync_rejects_total')).toBe(true);
    expect(uses('wfsync_schema_changes_total')).toBe(true);
    expect(uses('wfsync_schedule_delay_seconds')).toBe(true);
    for (const r of rules) {
      expect(r.alert, JSON.stringify(r)).toMatch(/^Wfsync[A-Za-z]+$/);
      expect(['critical', 'warning', 'info']).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      if (r.for !== undefined) expect(r.for).toMatch(/^\d+[smh]$/);
    }
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it('names only series this process exports', async () => {
    const names = await exported();
    for (const r of rules) {
      for (const used of r.expr.match(/\bwfsync_[a-z_]+/g) ?? []) expect(names, `${r.alert}: ${used}`).toContain(used);
    }
  });

  it('passes promtool check rules (where promtool is installed)', () => {
    const found = spawnSync('sh', ['-c', 'command -v promtool']).status === 0;
    if (!found) {
      // npm test's pretest (bin/test-tools.sh) installs Debian's prometheus package, which has promtool.
      expect(process.env.CI ?? '').toBe('');
      return;
    }
    const out = execFileSync('promtool', ['check', 'rules', FILE], { encoding: 'utf8' });
    expect(out).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
  });

  it('raises WfsyncSchemaChanged once a field appears, and lets it go after the hour (promtool test rules)', () => {
    if (spawnSync('sh', ['-c', 'command -v promtool']).status !== 0) {
      expect(process.env.CI ?? '').toBe('');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'wfsync-alerts-'));
    try {
      const alert = (kind: string) => ({
        exp_labels: { severity: 'info', stream: 'individuals', kind },
        exp_annotations: {
          summary: `individuals: a field the service sends has ${kind}`,
          description: rules.find((r) => r.alert === 'WfsyncSchemaChanged')!.annotations.description,
        },
      });
      const test = {
        rule_files: [FILE],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: [
              { series: 'wfsync_schema_changes_total{stream="individuals",kind="appeared"}', values: '0 0 1 1 1x120' },
              { series: 'wfsync_schema_changes_total{stream="individuals",kind="gone"}', values: '0x125' },
            ],
            alert_rule_test: [
              { eval_time: '1m', alertname: 'WfsyncSchemaChanged', exp_alerts: [] },
              { eval_time: '10m', alertname: 'WfsyncSchemaChanged', exp_alerts: [alert('appeared')] },
              { eval_time: '90m', alertname: 'WfsyncSchemaChanged', exp_alerts: [] },
            ],
          },
        ],
      };
      const file = join(dir, 'schema-changes.test.yml');
      writeFileSync(file, JSON.stringify(test));
      const r = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8' });
      expect(`${r.stdout}${r.stderr}`).toMatch(/SUCCESS/);
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
