import { type DynamicModule, type FactoryProvider, Module, type ModuleMetadata, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { IdempotencyInterceptor } from './idempotency-interceptor.js';
import { RETRYSAFE_OPTIONS, type RetrysafeModuleOptions } from './retrysafe-options.js';
import { SpecificationPublisher } from './specification-publisher.js';

/** `forRootAsync`'s options: the options made by a factory, from other providers. */
export interface RetrysafeModuleAsyncOptions<Tx = unknown> {
  readonly imports?: ModuleMetadata['imports'];
  /** The providers whose values `useFactory` receives, in order. */
  readonly inject?: FactoryProvider['inject'];
  useFactory(this: void, ...args: never[]): RetrysafeModuleOptions<Tx> | Promise<RetrysafeModuleOptions<Tx>>;
}

/** Makes `@Idempotent` work in every module of the application (a global module). Import it once, in the root module. */
export class RetrysafeModule {
  static forRoot<Tx>(options: RetrysafeModuleOptions<Tx>): DynamicModule {
    return retrysafeModule({ provide: RETRYSAFE_OPTIONS, useValue: options });
  }

  static forRootAsync<Tx>(options: RetrysafeModuleAsyncOptions<Tx>): DynamicModule {
    return retrysafeModule(
      { provide: RETRYSAFE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] },
      options.imports,
    );
  }
}
Module({})(RetrysafeModule);

function retrysafeModule(options: Provider, imports: ModuleMetadata['imports'] = []): DynamicModule {
  return {
    module: RetrysafeModule,
    global: true,
    imports: [DiscoveryModule, ...imports],
    providers: [options, IdempotencyInterceptor, SpecificationPublisher],
    exports: [RETRYSAFE_OPTIONS, IdempotencyInterceptor],
  };
}
