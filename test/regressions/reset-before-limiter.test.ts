import { eachFramework } from '../adapters/frameworks.js';
import { goneClients } from '../adapters/suites/gone.js';

describe.each(eachFramework)('%s: a client that resets before the limiter runs', (_, framework) =>
  goneClients(framework),
);
