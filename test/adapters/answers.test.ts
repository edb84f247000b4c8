import { eachFramework } from './frameworks.js';
import { answers } from './suites/answers.js';

describe.each(eachFramework)('%s: answers', (_, framework) => answers(framework));
