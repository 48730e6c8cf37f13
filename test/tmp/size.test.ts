import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { startTestServer } from '../harness.ts';
it('size', async () => { const t = await startTestServer(); const res = await t.request('GET', '/api/v1/openapi.json', { token: null }); console.log('OPENAPI_BYTES', Buffer.byteLength(res.body)); writeFileSync('/tmp/ws-openapi.json', res.body); await t.close(); });
