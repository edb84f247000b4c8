// app-config.mjs without `name`: an options module shared with @sluice/fastify's plugin, which names
// its global limit 'global' when the options name none (the command reads 'default' unless told).
import options from './app-config.mjs';

const { name: _, ...unnamed } = options;
export default unnamed;
