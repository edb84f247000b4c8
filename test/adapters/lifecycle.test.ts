import { eachFramework } from './frameworks.js';
import { lifecycle } from './suites/lifecycle.js';

describe.each(eachFramework)('%s: holding, releasing, late decisions', (_, framework) =>
  lifecycle(framework),
);
