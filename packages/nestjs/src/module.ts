import type { DynamicModule, InjectionToken, ModuleMetadata, Provider } from '@nestjs/common';
import { Module } from '@nestjs/common';
import type { SluiceOptions } from './decorators.js';
import { SluiceGuard } from './guard.js';
import { RouteLimits } from './limits.js';

/** `forRootAsync`: the options from a factory, with what it injects. */
export interface SluiceAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useFactory: (...args: never[]) => SluiceOptions | Promise<SluiceOptions>;
  inject?: InjectionToken[];
}

/** `forRoot(options)` once (global), then `SluiceGuard`; a SluiceConfigError stops start-up, never a request. */
@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class; forRoot is how one takes options
export class SluiceModule {
  static forRoot(options: SluiceOptions): DynamicModule {
    return module({ provide: RouteLimits, useValue: new RouteLimits(options) });
  }

  static forRootAsync({ imports = [], inject = [], useFactory }: SluiceAsyncOptions): DynamicModule {
    const limits = async (...args: never[]) => new RouteLimits(await useFactory(...args));
    return { ...module({ provide: RouteLimits, useFactory: limits, inject }), imports };
  }
}

const exports = [RouteLimits, SluiceGuard]; // global: @UseGuards(SluiceGuard) finds them in any module
function module(limits: Provider): DynamicModule {
  return { module: SluiceModule, global: true, providers: [limits, SluiceGuard], exports };
}
