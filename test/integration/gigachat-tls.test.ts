import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GigaChatLanguageModel } from '../../shared/adapters/gigachat/gigachat-language-model.js';
import { startScriptedGigaChatServer, type ScriptedGigaChatServer } from '../fakes/scripted-gigachat-server.js';

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
// Without openssl no test certificate can be made: the suite is reported skipped, with this line saying why.
if (!hasOpenssl)
  console.warn('gigachat-tls.test.ts skipped: openssl is not installed (it makes the test certificates)');

/**
 * GigaChat's hosts present certificates of a root most systems do not trust. A scripted GigaChat over
 * HTTPS with a certificate from a test root stands in: refused by default, trusted with GIGACHAT_CA_FILE
 * (added to the system's roots) or, knowingly, with the insecure flag.
 */
describe.skipIf(!hasOpenssl)('GigaChat over TLS with its own root', () => {
  let dir: string;
  let server: ScriptedGigaChatServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gigachat-tls-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=Test Trusted Root CA',
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=127.0.0.1',
    );
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
    openssl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
    );
    server = await startScriptedGigaChatServer({
      tls: { key: readFileSync(join(dir, 'server.key'), 'utf8'), cert: readFileSync(join(dir, 'server.pem'), 'utf8') },
    });
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const model = (options: { caFile?: string; insecureTls?: boolean }) =>
    new GigaChatLanguageModel({
      model: 'GigaChat',
      authKey: server.authKey,
      authUrl: server.authUrl,
      baseURL: server.baseUrl,
      stream: false,
      ...options,
    });

  it('an untrusted certificate fails, not retried, naming GIGACHAT_CA_FILE', async () => {
    const error = await model({})
      .generate({ messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
    expect((error as Error).message).toMatch(/OAuth endpoint.*not trusted.*GIGACHAT_CA_FILE/);
    expect(server.requests).toHaveLength(0);
  });

  it('GIGACHAT_CA_FILE trusts the root for the OAuth endpoint and the API; the insecure flag skips the check', async () => {
    server.setScript([{ content: 'trusted' }, { content: 'unchecked' }]);
    const trusted = await model({ caFile: join(dir, 'ca.pem') }).generate({
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(trusted.message.content).toBe('trusted');
    const unchecked = await model({ insecureTls: true }).generate({ messages: [{ role: 'user', content: 'hi' }] });
    expect(unchecked.message.content).toBe('unchecked');
    expect(server.oauthRequests()).toHaveLength(2);
  });

  it('a CA file that cannot be read is refused when the model is made', () => {
    expect(() => model({ caFile: join(dir, 'missing.pem') })).toThrow(
      /GIGACHAT_CA_FILE '.*missing\.pem' cannot be read/,
    );
  });
});
