// The demo app. It loads the wasm module (explicit init, as a plain <script type="module"> must)
// and streams a reply from the local mock LLM that `make demo` serves.
import init, { version } from '/pkg/web/agent_world_wasm.js';

const $ = (id) => document.getElementById(id);

async function main() {
  await init();
  $('version').textContent = version();
  const { mockBaseUrl } = await (await fetch('/demo-config.json')).json();
  $('status').textContent = `streaming from ${mockBaseUrl}…`;
  const res = await fetch(`${mockBaseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer demo' },
    body: JSON.stringify({
      model: 'mock-alice', stream: true,
      messages: [{ role: 'user', content: 'Hello! What can this demo do?' }],
    }),
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    const frames = buffer.split('\n\n');
    buffer = frames.pop();
    for (const frame of frames) {
      const data = frame.replace(/^data: /, '');
      if (data === '[DONE]') continue;
      const delta = JSON.parse(data).choices?.[0]?.delta?.content;
      if (delta) $('reply').textContent += delta;
    }
  }
  $('status').textContent = 'done';
}

main().catch((err) => {
  $('status').textContent = `error: ${err.message}`;
});
