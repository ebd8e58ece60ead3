/**
 * What a served method is: its parameter decoders and what it runs with. `method()` builds one
 * from typed decoders; it also turns `safe` / `finalized` arguments into the block numbers they
 * name (see blockTags.ts) before the method runs, so no backend ever sees those two tags.
 */
import type { RpcBackend } from './backend.js';
import { isConfirmedTag, resolveConfirmed } from './blockTags.js';
import type { ChainEvents } from './chainEvents.js';
import type { Filters } from './filters.js';
import type { Json } from './json.js';
import type { LogQueryOptions } from './logQuery.js';
import type { Decoder } from './params.js';
import type { Subscriptions } from './subscriptions.js';

/** What a method runs with. */
export interface RpcContext {
  readonly backend: RpcBackend;
  /** web3_clientVersion's answer. */
  readonly clientVersion: string;
  /** Log query limits, and how deep `safe` / `finalized` are. */
  readonly logQuery: LogQueryOptions;
  /** Logs and chain changes; without them eth_getLogs, filters and subscriptions are unavailable. */
  readonly events?: ChainEvents;
  /** The server's installed filters (shared by every connection). */
  readonly filters?: Filters;
  /** This connection's subscriptions: only on a WebSocket ("notifications not supported" otherwise). */
  readonly subscriptions?: Subscriptions;
}

/** One served method. */
export interface RpcMethod {
  readonly required: readonly Decoder<unknown>[];
  readonly optional: readonly Decoder<unknown>[];
  /** When set, `run` gets the request's `params` as they came (one argument), undecoded. */
  readonly rawParams?: boolean;
  run(ctx: RpcContext, args: readonly unknown[]): Json | Promise<Json>;
}

type Decoders<T extends readonly unknown[]> = { readonly [K in keyof T]: Decoder<T[K]> };

/** A method from typed decoders (required ones first, as geth's signatures have them). */
export function method<R extends readonly unknown[] | [], O extends readonly unknown[] | [] = []>(
  required: Decoders<R>,
  optional: Decoders<O>,
  run: (ctx: RpcContext, ...args: [...R, ...Partial<O>]) => Json | Promise<Json>,
): RpcMethod {
  return {
    required,
    optional,
    run: (ctx, args) => {
      const resolved = args.map((a) =>
        isConfirmedTag(a)
          ? resolveConfirmed(a, () => ctx.backend.blockNumber(), ctx.logQuery.confirmationDepth)
          : a,
      );
      return run(ctx, ...(resolved as [...R, ...Partial<O>]));
    },
  };
}
