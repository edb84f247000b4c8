// app-config.mjs as an app writes it with its secret in the environment:
// credentialSecret: process.env.APP_SECRET, which an operator's shell may not have.
import options from './app-config.mjs';

export default { ...options, credentialSecret: process.env.SLUICE_CLI_TEST_APP_SECRET };
