import { eachFramework } from './frameworks.js';
import { headerStrings } from './suites/headers.js';

describe.each(eachFramework)('%s: header strings from the shared table', (_, framework) =>
  headerStrings(framework),
);
