// A StoreAdapter (see the package's `StoreAdapter` TypeScript interface) over a Durable
// Object's storage (`this.ctx.storage`).
//
// Durable Object storage already orders keys as strings and its `list` takes exactly the
// adapter's options (prefix, start inclusive, end exclusive, reverse, limit), so reads stay
// bounded: a page of messages is one `list` of at most `limit` keys.
//
// Atomicity: `batch` runs every write in ONE `storage.transaction()`, so a turn (a message with
// its memory and counters) or a cascading delete is stored completely or not at all.

/**
 * @param {DurableObjectStorage} storage `this.ctx.storage` of a Durable Object.
 * @returns {import("./agent_world_wasm.js").StoreAdapter}
 */
export function durableObjectAdapter(storage) {
  return {
    async get(key) {
      return storage.get(key);
    },
    async put(key, value) {
      await storage.put(key, value);
    },
    async delete(key) {
      await storage.delete(key);
    },
    async list(prefix, { start, end, reverse, limit } = {}) {
      const options = { prefix };
      if (start !== undefined) options.start = start;
      if (end !== undefined) options.end = end;
      if (reverse) options.reverse = true;
      if (limit !== undefined) options.limit = limit;
      return [...(await storage.list(options))];
    },
    async batch(ops) {
      await storage.transaction(async (txn) => {
        for (const op of ops) {
          if (op.type === 'put') await txn.put(op.key, op.value);
          else await txn.delete(op.key);
        }
      });
    },
  };
}
