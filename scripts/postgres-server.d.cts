export function binDir(): string | undefined;
export function postgresUser(): { uid: number; gid: number };
export function signalAll(pid: number, signal: NodeJS.Signals): void;
export function initCluster(bin: string, dir: string): string;
export function serverArgs(
  data: string,
  dir: string,
  port: number,
  settings?: Record<string, string | number>,
): string[];
