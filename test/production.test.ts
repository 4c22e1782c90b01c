import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The production files: docker-compose.yml is checked by Compose itself (`docker compose config`, or Compose 1's
 * `docker-compose config`), which the test skips only when neither is installed; the Dockerfile and the compose
 * file's settings are checked as text.
 */

const ROOT = new URL('..', import.meta.url).pathname;
const read = (f: string) => readFileSync(`${ROOT}${f}`, 'utf8');

function compose(): string[] | undefined {
  for (const cmd of [['docker', 'compose'], ['docker-compose']]) {
    const r = spawnSync(cmd[0]!, [...cmd.slice(1), 'version'], { encoding: 'utf8' });
    if (r.status === 0) return cmd;
  }
  return undefined;
}

// Compose 1 takes seconds to start: asked once here, not per test.
const cmd = compose();
const env = { ...process.env, WFS_BASE_URL: 'https://api.example.com/v1', WFS_API_KEY: 'k', POSTGRES_PASSWORD: 'pw' };

describe('docker-compose.yml', () => {
  it.skipIf(cmd === undefined)(
    'is valid for Compose, with every service',
    () => {
      const config = spawnSync(cmd![0]!, [...cmd!.slice(1), '-f', `${ROOT}docker-compose.yml`, 'config'], {
        encoding: 'utf8',
        env,
      });
      expect(config.status, config.stderr).toBe(0);
      const services = spawnSync(
        cmd![0]!,
        [...cmd!.slice(1), '-f', `${ROOT}docker-compose.yml`, 'config', '--services'],
        { encoding: 'utf8', env },
      );
      expect(services.stdout.trim().split('\n').sort()).toEqual([
        'migrate',
        'postgres',
        'redis',
        'scheduler',
        'web',
        'worker',
      ]);
      // Settings reach the services with their values from the environment.
      expect(config.stdout).toContain('https://api.example.com/v1');
      expect(config.stdout).toMatch(/postgres:\/\/wfsync:pw@postgres:5432\/wfsync/);
    },
    120_000,
  );

  const file = read('docker-compose.yml');
  const service = (name: string) => {
    const m = new RegExp(`\\n  ${name}:\\n([\\s\\S]*?)(?=\\n  [a-z]+:\\n|\\nvolumes:)`).exec(file);
    if (!m) throw new Error(`no service ${name}`);
    return m[1]!;
  };

  it('runs Redis with AOF and noeviction, and checks Postgres, Redis and the web server', () => {
    expect(service('redis')).toMatch(/--appendonly", "yes"/);
    expect(service('redis')).toMatch(/--maxmemory-policy", "noeviction"/);
    expect(service('redis')).toMatch(/redis-cli", "ping"/);
    expect(service('postgres')).toContain('pg_isready');
    expect(service('web')).toContain('/health');
    expect(service('worker')).toContain('/health');
  });

  it('migrates once before the scheduler, the workers and the web server start', () => {
    expect(service('migrate')).toContain('command: ["migrate"]');
    expect(service('migrate')).toContain('restart: "no"');
    for (const s of ['scheduler', 'worker', 'web'])
      expect(service(s)).toMatch(/migrate:\n\s+condition: service_completed_successfully/);
  });

  it('gives every service the settings it needs; the web server listens on every interface, workers expose metrics', () => {
    for (const name of [
      'DATABASE_URL',
      'REDIS_URL',
      'WFS_BASE_URL',
      'WFS_API_KEY',
      'WFS_PUSH_TOKEN',
      'WFS_SECRET_KEY',
      'WFS_DASHBOARD_TOKEN',
      'LOG_LEVEL',
    ]) {
      expect(file).toMatch(new RegExp(`\\n    ${name}: `));
    }
    expect(service('web')).toContain('command: ["serve"]');
    expect(service('web')).toContain('WFS_HTTP_HOST: 0.0.0.0');
    expect(service('web')).toMatch(/ports:\n\s+- "127\.0\.0\.1:8080:8080"/);
    expect(service('worker')).toContain('WFS_METRICS_PORT: "9464"');
    expect(service('worker')).toMatch(/expose:\n\s+- "9464"/);
  });
});

describe('Dockerfile', () => {
  const file = read('Dockerfile');
  it('builds in stages and runs as an unprivileged user', () => {
    expect(file.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(file).toMatch(/COPY --from=deps /);
    const user = /^USER (\S+)/m.exec(file)?.[1];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    // USER comes after the last RUN, so nothing the service runs has root's rights.
    expect(file.lastIndexOf('\nUSER ')).toBeGreaterThan(file.lastIndexOf('\nRUN '));
    // The binary runs as its own executable, so the node flags of its first line apply.
    expect(file).toMatch(/ENTRYPOINT \["bin\/wfsync\.js"\]/);
  });
});
