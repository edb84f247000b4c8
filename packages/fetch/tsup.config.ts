import { packageConfig } from '../../scripts/tsup-package.js';

export default packageConfig();
