/** `express4` is an npm alias of Express 4 (a devDependency); its API is typed like Express's. */
declare module 'express4' {
  import express from 'express';
  export default express;
}
