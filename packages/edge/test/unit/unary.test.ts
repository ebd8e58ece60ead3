/** A generated client's unary method as a promise: called on its client, settled by its callback. */
import { type CallOptions, type Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { describe, expect, it } from '@jest/globals';
import { unary } from '@monsoon/edge';

/** The shape of a generated client: a method that needs its `this`. */
class EchoClient {
  readonly name = 'echo';
  echo(
    req: { text: string },
    _metadata: Metadata,
    options: Partial<CallOptions>,
    cb: (err: ServiceError | null, res: { text: string }) => void,
  ): void {
    if (req.text === '') {
      const err = Object.assign(new Error('3 INVALID_ARGUMENT: empty'), {
        code: status.INVALID_ARGUMENT,
        details: 'empty',
      }) as ServiceError;
      setImmediate(() => cb(err, { text: '' }));
      return;
    }
    setImmediate(() => cb(null, { text: `${this.name}: ${req.text} ${String(options.deadline ?? '-')}` }));
  }
}

describe('unary', () => {
  it('resolves with the response, passing the options, with the method bound to its client', async () => {
    const c = new EchoClient();
    expect(await unary(c, c.echo, { text: 'hi' })).toEqual({ text: 'echo: hi -' });
    expect(await unary(c, c.echo, { text: 'hi' }, { deadline: 5 })).toEqual({ text: 'echo: hi 5' });
  });

  it('rejects with the ServiceError', async () => {
    const c = new EchoClient();
    await expect(unary(c, c.echo, { text: '' })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: 'empty',
    });
  });
});
