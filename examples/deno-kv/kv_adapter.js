// A StoreAdapter (see the package's `StoreAdapter` TypeScript interface) over Deno KV.
//
// Every engine key (an ASCII string such as "aww/m/team/<chat>/000000000042") becomes the Deno
// KV key [...base, key]: one string part, so Deno KV's byte order is the engine's key order and
// a string prefix is the key range [prefix, successor(prefix)). `list` honours start, end,
// reverse and limit, so paging a long chat reads one page, not the chat.
//
// Atomicity: `batch` is ONE `kv.atomic()` operation, so a turn (a message with its memory and
// counters) or a cascading delete is written completely or not at all. Deno KV limits an atomic
// operation (1000 mutations and 800 KiB in Deno 2; values up to 64 KiB): deleting a chat with
// more than ~300 messages, or a message over 64 KiB, fails as a whole with the error Deno KV
// reports, and nothing is written.

/** The smallest string greater than every string starting with `prefix` (ASCII keys). */
function successor(prefix) {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/**
 * @param {Deno.Kv} kv an open Deno KV database (`await Deno.openKv(path)`).
 * @param {{ base?: Deno.KvKeyPart[] }} [options] key parts put in front of every key, to share
 *   a database with other data (default `["agent-world"]`).
 * @returns {import("../../pkg/web/agent_world_wasm.js").StoreAdapter}
 */
export function denoKvAdapter(kv, { base = ['agent-world'] } = {}) {
  const k = (key) => [...base, key];
  return {
    async get(key) {
      const entry = await kv.get(k(key));
      return entry.value ?? undefined;
    },
    async put(key, value) {
      await kv.set(k(key), value);
    },
    async delete(key) {
      await kv.delete(k(key));
    },
    async list(prefix, { start, end, reverse = false, limit } = {}) {
      const from = start !== undefined && start > prefix ? start : prefix;
      const upper = successor(prefix);
      const to = end !== undefined && end < upper ? end : upper;
      if (from >= to) return [];
      const out = [];
      for await (const entry of kv.list({ start: k(from), end: k(to) }, { reverse, limit })) {
        out.push([entry.key[entry.key.length - 1], entry.value]);
      }
      return out;
    },
    async batch(ops) {
      const atomic = kv.atomic();
      for (const op of ops) {
        if (op.type === 'put') atomic.set(k(op.key), op.value);
        else atomic.delete(k(op.key));
      }
      const result = await atomic.commit();
      if (!result.ok) throw new Error('deno kv: the atomic batch was rejected; nothing was written');
    },
  };
}
