import { eachFramework } from './frameworks.js';
import { optionsPerRequest } from './suites/options.js';

describe.each(eachFramework)('%s: options per request', (_, framework) => optionsPerRequest(framework));
