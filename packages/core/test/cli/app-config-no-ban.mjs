// app-config.mjs without `ban`: the options of an app that bans no one.
import options from './app-config.mjs';

const { ban: _, ...noBan } = options;
export default noBan;
