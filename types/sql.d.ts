// SQL twins are imported as text: tsup's text loader in builds, scripts/jest-text-transform.cjs in tests.
declare module '*.sql' {
  const source: string;
  export default source;
}
