// Koa 2 (the `koa2` alias) ships no types; the suites type it as Koa 3, whose API it shares.
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
