import { spawnSync } from 'node:child_process';

function onPath(binary: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Makes sure `redis-server` is on PATH. As root on a Debian/Ubuntu machine it installs it with apt-get;
 * otherwise it throws with the exact command to run.
 */
export function ensureRedisServer(log: (line: string) => void): void {
  if (onPath('redis-server')) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && onPath('apt-get')) {
    log('redis-server is not installed; installing it: apt-get install -y redis-server');
    const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] });
    const install = spawnSync('apt-get', ['install', '-y', '-qq', 'redis-server'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (update.status === 0 && install.status === 0 && onPath('redis-server')) return;
    throw new Error(
      'installing redis-server with apt-get failed (see the output above); install it by hand, or set REDIS_URL to a Redis you run',
    );
  }
  const how = onPath('apt-get')
    ? 'sudo apt-get install -y redis-server'
    : onPath('brew')
      ? 'brew install redis'
      : onPath('dnf')
        ? 'sudo dnf install -y redis'
        : 'install Redis ≥ 6.2 (https://redis.io/docs/latest/operate/oss_and_stack/install/)';
  throw new Error(
    `redis-server is not installed and nothing answers on the local Redis port. Run: ${how} — or set REDIS_URL to a Redis you run.`,
  );
}
