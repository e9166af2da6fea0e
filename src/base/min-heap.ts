/** A binary min-heap: push and pop in O(log n). */
/** `before(a, b)` when a comes out first. */
export class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(a[i]!, a[parent]!)) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    a[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < a.length && this.before(a[l]!, a[min]!)) min = l;
      if (r < a.length && this.before(a[r]!, a[min]!)) min = r;
      if (min === i) return top;
      [a[i], a[min]] = [a[min]!, a[i]!];
      i = min;
    }
  }
}
