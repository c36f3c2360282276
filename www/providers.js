// "Test connection" and the model picker: one GET of the provider's model list, straight from
// the page (the page's CSP allows https: providers and the local mock). The key goes only in
// the header the provider wants and never into an error message.

// The engine's default base URLs (src/core/llm/provider.rs), for providers left blank.
const DEFAULT_BASE = {
  openai: 'https://api.openai.com/v1',
  xai: 'https://api.x.ai/v1',
  anthropic: 'https://api.anthropic.com',
  google: 'https://generativelanguage.googleapis.com',
  ollama: 'http://127.0.0.1:11434',
};

const trim = (url) => String(url).replace(/\/+$/, '');

/** The request that lists `provider`'s models, or null when it has no list (Azure lists
 * deployments through its management API, which a page cannot call). */
export function modelListRequest(provider, settings = {}) {
  const base = trim(settings.baseUrl || DEFAULT_BASE[provider] || '');
  const key = settings.apiKey ?? '';
  switch (provider) {
    case 'openai':
    case 'xai':
    case 'openai-compatible':
      if (!base) return { error: 'Fill in the Base URL first.' };
      return { url: `${base}/models`, headers: key ? { authorization: `Bearer ${key}` } : {},
        pick: (j) => (j?.data ?? []).map((m) => m?.id) };
    case 'anthropic':
      return { url: `${base}/v1/models?limit=100`, headers: {
        'x-api-key': key, 'anthropic-version': '2023-06-01',
        // Anthropic answers a browser only with this header (the user chose to call it from here).
        'anthropic-dangerous-direct-browser-access': 'true',
      }, pick: (j) => (j?.data ?? []).map((m) => m?.id) };
    case 'google':
      return { url: `${base}/v1beta/models?pageSize=1000`, headers: { 'x-goog-api-key': key },
        pick: (j) => (j?.models ?? [])
          .filter((m) => !m?.supportedGenerationMethods || m.supportedGenerationMethods.includes('generateContent'))
          .map((m) => String(m?.name ?? '').replace(/^models\//, '')) };
    case 'ollama':
      return { url: `${base}/api/tags`, headers: {}, pick: (j) => (j?.models ?? []).map((m) => m?.name ?? m?.model) };
    default:
      return null;
  }
}

/** The provider's error message from a JSON error body, without echoing anything key-like. */
function providerMessage(json) {
  const msg = json?.error?.message ?? json?.message ?? (typeof json?.error === 'string' ? json.error : '');
  return String(msg).replace(/\b(sk|key|AIza)[-_A-Za-z0-9]{8,}/g, '***').slice(0, 300);
}

/**
 * Lists `provider`'s models. Resolves `{models}` (sorted, de-duplicated strings) or rejects
 * with an Error whose message says what went wrong (HTTP status and the provider's message,
 * or that the network or CORS refused), never the key.
 */
export async function listModels(provider, settings, { timeoutMs = 10_000 } = {}) {
  const req = modelListRequest(provider, settings);
  if (!req) throw new Error('This provider has no model list to test against: send a message to check it.');
  if (req.error) throw new Error(req.error);
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  let res;
  try {
    res = await fetch(req.url, { headers: req.headers, signal: ctrl.signal, cache: 'no-store' });
  } catch (err) {
    throw new Error(err?.name === 'AbortError'
      ? `No answer within ${timeoutMs / 1000} s.`
      : 'Could not reach it (network, wrong URL, or the server does not allow calls from a page: CORS).');
  } finally {
    clearTimeout(timer);
  }
  let json = null;
  try {
    json = await res.json();
  } catch {
    // Not JSON: the status says enough.
  }
  if (!res.ok) {
    const why = providerMessage(json);
    throw new Error(`HTTP ${res.status}${why ? `: ${why}` : ''}`);
  }
  const models = [...new Set(req.pick(json).filter((m) => typeof m === 'string' && m))].sort();
  return { models };
}
