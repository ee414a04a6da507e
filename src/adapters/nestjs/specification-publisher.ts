import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { type AbstractHttpAdapter, DiscoveryService, HttpAdapterHost, MetadataScanner, Reflector } from '@nestjs/core';
import { RetrysafeError } from '../../core/errors.js';
import { publishRoute, specificationPaths, specificationReply } from '../../modes/published-specification.js';
import { idempotentRoute, type IdempotentRouteOptions, withModuleOptions } from './idempotent-options.js';
import { RETRYSAFE_OPTIONS, type RetrysafeModuleOptions } from './retrysafe-options.js';

/**
 * Publishes every `@Idempotent` route of the application's controllers in the
 * configuration's specification as the module starts, and, when the
 * configuration names a `specificationPath`, serves its page and OpenAPI
 * document there on either platform.
 */
export class SpecificationPublisher implements OnModuleInit {
  constructor(
    private readonly options: RetrysafeModuleOptions,
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const config = this.options.idempotency;
    for (const route of this.routes()) publishRoute(config, withModuleOptions(this.options, route), route.mode);
    // No HTTP adapter in a standalone application context: nothing to serve.
    const adapter = this.adapterHost.httpAdapter as AbstractHttpAdapter | undefined;
    if (config.specification.path === undefined || adapter === undefined) return;
    for (const path of Object.values(specificationPaths(config))) {
      adapter.get(path, (_request: unknown, response: unknown) => {
        const reply = specificationReply(config, 'GET', path);
        if (reply === undefined) throw new RetrysafeError('misuse', `Nothing is published at ${path}.`);
        for (const [name, value] of Object.entries(reply.headers))
          adapter.setHeader(response, name, typeof value === 'string' ? value : value.join(', '));
        adapter.reply(response, Buffer.from(reply.body).toString('utf8'), reply.status);
      });
    }
  }

  /** Each controller method's `@Idempotent` options, its own or its class's, once per operation. */
  private routes(): IdempotentRouteOptions[] {
    const scanner = new MetadataScanner();
    const routes = new Map<string, IdempotentRouteOptions>();
    for (const { metatype } of this.discovery.getControllers()) {
      if (typeof metatype !== 'function') continue;
      const prototype = metatype.prototype as Record<string, unknown>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const method = prototype[name];
        if (typeof method !== 'function') continue;
        const route = this.reflector.getAllAndOverride(idempotentRoute, [method, metatype]) as
          IdempotentRouteOptions | undefined;
        if (route !== undefined && !routes.has(route.operation)) routes.set(route.operation, route);
      }
    }
    return [...routes.values()];
  }
}
Injectable()(SpecificationPublisher);
// Explicit tokens: the publisher must not depend on emitted decorator metadata.
Inject(RETRYSAFE_OPTIONS)(SpecificationPublisher, undefined, 0);
Inject(DiscoveryService)(SpecificationPublisher, undefined, 1);
Inject(Reflector)(SpecificationPublisher, undefined, 2);
Inject(HttpAdapterHost)(SpecificationPublisher, undefined, 3);
