// The JavaScript layer around wasm-bindgen's glue (scripts/package.mjs puts it into every entry
// of the npm package: the web build and the nodejs build). Two jobs no Rust code can do:
//
// 1. A trap (a wasm `RuntimeError`, or the wasm stack overflowing) leaves no Rust code running
//    and the instance's memory in an unknown state: every later call could hang or fail with a
//    raw RuntimeError. Every export of the instance is wrapped: after the first trap, each call
//    throws (or, for an async API, rejects) at once with AgentWorldError `internal_error`, and
//    the promises pending at that moment reject with it too. Entries from the event loop
//    (closures called by promises, timers and the GC) return quietly instead: throwing there
//    would be an uncaught exception, which ends a Node process.
// 2. `free()` and `[Symbol.dispose]()` close the world (stop its work; later calls reject with
//    `world_closed`) and never throw; a method called on something that is not an open world
//    (a method passed around without its `this`) fails with `world_closed` too, not with the
//    glue's "null pointer passed to rust".
const __aww = (() => {
  let dead = null;
  let depth = 0;
  const pending = new Set();
  const error = (code, message, cause) => {
    const e = new Error(message, cause === undefined ? undefined : { cause });
    e.name = 'AgentWorldError';
    e.code = code;
    return e;
  };
  const isTrap = (e) => e instanceof WebAssembly.RuntimeError
    || (e instanceof RangeError && /call stack/i.test(e.message));
  const die = (cause) => {
    if (!dead) {
      dead = error('internal_error', 'the engine stopped after an internal error; reload the page', cause);
      for (const reject of pending) reject(dead);
      pending.clear();
    }
  };
  const track = (p) => new Promise((resolve, reject) => {
    if (dead) return reject(dead);
    pending.add(reject);
    p.then((v) => { pending.delete(reject); resolve(v); }, (e) => { pending.delete(reject); reject(e); });
  });
  // What a quiet entry returns: the glue of a closure that returns a Result reads `ret[1]`
  // (an error?) and `ret[0]`; zeros mean "no error, no value", so nothing throws.
  const NOTHING = Object.freeze([0, 0, 0, 0]);
  const fail = (quiet, async) => {
    if (quiet) return NOTHING;
    if (async) return Promise.reject(dead);
    throw dead;
  };
  function guardExports(exports, asyncExports) {
    const out = {};
    for (const [name, f] of Object.entries(exports)) {
      if (typeof f !== 'function') { out[name] = f; continue; }
      // Entries from the event loop (closures called by promises and timers, the GC's frees)
      // and the glue's own bookkeeping on those paths (externref table, wasm-bindgen intrinsics):
      // build_pkg names them `q<n>` (scripts/glue-step.mjs), every other export `x<n>`.
      // Never malloc/realloc: an API call must reach its own export and fail there.
      const quiet = /^q[0-9a-z]+$/.test(name);
      const async = asyncExports.includes(name);
      out[name] = (...args) => {
        if (dead) {
          if (name === 'isAgentWorldError') {
            const v = args[0];
            return v instanceof Error && v.name === 'AgentWorldError' && typeof v.code === 'string' ? 1 : 0;
          }
          return fail(quiet, async);
        }
        depth++;
        let r;
        try {
          r = f(...args);
        } catch (e) {
          if (isTrap(e)) die(e);
          if (!dead) throw e;
          if (depth > 1) throw dead;
          return fail(quiet, async);
        } finally {
          depth--;
        }
        return r instanceof Promise ? track(r) : r;
      };
    }
    return out;
  }
  function guardClass(cls, asyncMethods) {
    const proto = cls.prototype;
    const closed = (async) => {
      const e = error('world_closed', 'this is not an open AgentWorld: it was closed (free()), or a method '
        + 'was called without its world (use world.send.bind(world), not world.send)');
      if (async) return Promise.reject(e);
      throw e;
    };
    for (const name of Object.getOwnPropertyNames(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      if (name === 'constructor' || name === 'free' || name.startsWith('__')) continue;
      const f = d.value ?? d.get;
      if (typeof f !== 'function') continue;
      const async = asyncMethods.includes(name);
      const guarded = { [name](...args) { return this instanceof cls && this.__wbg_ptr ? f.apply(this, args) : closed(async); } }[name];
      Object.defineProperty(proto, name, d.get ? { ...d, get: guarded } : { ...d, value: guarded });
    }
    function free() {
      if (!(this instanceof cls) || !this.__wbg_ptr) return;
      try { this.__close(); } catch (e) { if (e !== dead) throw e; }
    }
    Object.defineProperty(proto, 'free', { ...Object.getOwnPropertyDescriptor(proto, 'free'), value: free });
    if (Symbol.dispose) proto[Symbol.dispose] = free;
  }
  return { guardExports, guardClass };
})();
