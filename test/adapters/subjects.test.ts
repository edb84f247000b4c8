import { eachFramework } from './frameworks.js';
import { subjects } from './suites/subjects.js';

describe.each(eachFramework)('%s: who is limited', (_, framework) => subjects(framework));
