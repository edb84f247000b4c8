import { listenExpress, startEach } from '../shared/listen.js';
import { createApp } from './app.js';
import { drive } from './client.js';

describe('examples/observability', () => {
  let close: (() => Promise<void>) | undefined;
  const app = startEach(async () => {
    const built = createApp();
    close = built.close;
    return listenExpress(built.app);
  });
  afterEach(() => close?.());

  it('serves decisions by limiter, policy and outcome at /metrics, and they move with traffic', async () => {
    const lines = await drive(app.url);
    const value = (name: string, labels: string) =>
      Number(
        lines
          .find((l) => l.startsWith(name) && labels.split(',').every((x) => l.includes(x)))
          ?.split(' ')
          .pop(),
      );
    // 5 logins (3 allowed) and 25 GETs, all under the app-wide limit of 20.
    expect(value('sluice_decisions_total', 'sluice_limiter="login",sluice_outcome="allowed"')).toBe(3);
    expect(value('sluice_decisions_total', 'sluice_limiter="login",sluice_outcome="denied"')).toBe(2);
    expect(value('sluice_decisions_total', 'sluice_limiter="api",sluice_outcome="allowed"')).toBe(20);
    expect(
      value(
        'sluice_decisions_total',
        'sluice_limiter="api",sluice_outcome="denied",sluice_policy="20-per-1m"',
      ),
    ).toBe(10);
  });
});
