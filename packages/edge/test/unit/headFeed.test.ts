/** A head feed tells each subscriber each new head once, and only when the head moved. */
import { describe, expect, it } from '@jest/globals';
import { HeadFeed } from '@monsoon/edge';

describe('HeadFeed', () => {
  it('announces a moved head once to every subscriber; an unsubscribed one hears nothing more', () => {
    let head = { hash: 'a', number: 0 };
    const feed = new HeadFeed(
      () => head,
      (h) => h.hash,
    );
    const heard: string[] = [];
    const stopA = feed.subscribe((h) => heard.push(`A${h.number}`));
    feed.subscribe((h) => heard.push(`B${h.number}`));
    expect(feed.subscribers).toBe(2);

    feed.check(); // not moved
    expect(heard).toEqual([]);
    head = { hash: 'b', number: 1 };
    feed.check();
    feed.check();
    expect(heard).toEqual(['A1', 'B1']);
    expect(feed.current()).toBe(head);

    stopA();
    expect(feed.subscribers).toBe(1);
    head = { hash: 'c', number: 1 }; // a fork at the same height is a new head
    feed.check();
    expect(heard).toEqual(['A1', 'B1', 'B1']);
  });

  it('a listener that unsubscribes while being told does not stop the others hearing', () => {
    let n = 0;
    const feed = new HeadFeed(() => n, String);
    const heard: string[] = [];
    const stop = feed.subscribe(() => {
      heard.push('first');
      stop();
    });
    feed.subscribe(() => heard.push('second'));
    n = 1;
    feed.check();
    n = 2;
    feed.check();
    expect(heard).toEqual(['first', 'second', 'second']);
  });
});
