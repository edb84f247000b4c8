import { connectCluster } from '@sluice-examples/shared/redis.js';
import { formatNodes, sharedCluster } from '../../test/support/redis.js';
import { ask, listenExpress } from '../shared/listen.js';
import { createApp } from './app.js';
it('keys', async () => {
  const client = await connectCluster(formatNodes(await sharedCluster()));
  const app = await listenExpress(createApp({ client, prefix: 'dbgk' }));
  await ask(`${app.url}/api/things`);
  await ask(`${app.url}/checkout`, { method: 'POST' });
  const keys: string[] = [];
  for (const node of client.nodes('master')) keys.push(...(await node.keys('dbgk:*')));
  console.log(keys);
  for (const node of client.nodes('master')) { const k = await node.keys('dbgk:*'); if (k.length) await node.del(...k); }
  await app.close();
  client.disconnect();
});
