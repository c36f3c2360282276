// Proves the mock is faithful: the official client libraries, pointed at it, parse its streamed
// and whole replies into exactly the scripted text (and usage, where the SDK exposes it).
// Run: node --test tests/mock-llm/

import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { Ollama } from 'ollama';
import { startMockLlm, estimateTokens } from './server.mjs';

const REPLY = 'Hello @bob, this is Alice. Ünïcode and "quotes" survive.\nSecond line <world>pass</world>';
const REASONING = 'First I consider the question, then I answer.';
// Scripted through the system prompt, the way the engine's agents will script it.
const SYSTEM = `You are Alice.\nmock-reply: ${REPLY.replace(/\n/g, '\\n')}`;
const SYSTEM_REASONING = `${SYSTEM}\nmock-reasoning: ${REASONING}`;

let mock;
before(async () => {
  mock = await startMockLlm({ delayMs: 0 });
});
after(() => mock.close());
beforeEach(() => mock.reset());

describe('openai SDK', () => {
  const client = () => new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0 });
  const messages = (system = SYSTEM) => [
    { role: 'system', content: system },
    { role: 'user', content: 'Say hello' },
  ];

  test('streams the scripted text, reasoning and usage', async () => {
    const stream = await client().chat.completions.create({
      model: 'mock-alice',
      messages: messages(SYSTEM_REASONING),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let reasoning = '';
    let usage;
    let finish;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice) {
        text += choice.delta.content ?? '';
        reasoning += choice.delta.reasoning_content ?? '';
        finish = choice.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, REPLY);
    assert.equal(reasoning, REASONING);
    assert.equal(finish, 'stop');
    assert.equal(usage.completion_tokens, estimateTokens(REPLY) + estimateTokens(REASONING));
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  });

  test('the stream helper assembles the same final message', async () => {
    const runner = client().chat.completions.stream({ model: 'mock-alice', messages: messages() });
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0].message.content, REPLY);
  });

  test('non-streamed reply and usage', async () => {
    const res = await client().chat.completions.create({ model: 'mock-alice', messages: messages() });
    assert.equal(res.choices[0].message.content, REPLY);
    assert.equal(res.usage.completion_tokens, estimateTokens(REPLY));
  });

  test('AzureOpenAI reaches the deployment route with api-key', async () => {
    const azure = new AzureOpenAI({ endpoint: mock.url, apiKey: 'az-key', apiVersion: '2024-10-21', deployment: 'gpt-dep', maxRetries: 0 });
    const stream = await azure.chat.completions.create({ model: 'gpt-dep', messages: messages(), stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, REPLY);
    const [req] = mock.requests();
    assert.equal(req.provider, 'azure');
    assert.equal(req.headers['api-key'], '***');
  });

  test('a status fault surfaces as APIError with status and Retry-After', async () => {
    const c = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-mock-fault': 'status:429:3' } });
    await assert.rejects(c.chat.completions.create({ model: 'm', messages: messages() }), (err) => {
      assert.ok(err instanceof OpenAI.APIError);
      assert.equal(err.status, 429);
      assert.equal(err.headers.get('retry-after'), '3');
      assert.equal(err.code, 'rate_limit_exceeded');
      return true;
    });
  });

  test('aborting the SDK stream is seen by the mock as closedByClient', async () => {
    const c = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-mock-delay': '30' } });
    const stream = await c.chat.completions.create({ model: 'm', messages: messages(), stream: true });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break; // leaving the loop aborts the request
    }
    const end = Date.now() + 2000;
    while (!mock.requests()[0]?.closedByClient && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(mock.requests()[0].closedByClient, true);
  });
});

describe('@anthropic-ai/sdk', () => {
  const client = () => new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0 });
  const params = (system = SYSTEM) => ({ model: 'mock-alice', max_tokens: 256, system, messages: [{ role: 'user', content: 'Say hello' }] });

  test('messages.stream yields the text deltas and a final message with usage', async () => {
    const stream = client().messages.stream(params());
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    assert.equal(text, REPLY);
    assert.equal(final.content.length, 1);
    assert.equal(final.content[0].type, 'text');
    assert.equal(final.content[0].text, REPLY);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.usage.output_tokens, estimateTokens(REPLY));
    assert.ok(final.usage.input_tokens > 0);
  });

  test('a thinking block streams as thinking, apart from the text', async () => {
    const stream = client().messages.stream(params(SYSTEM_REASONING));
    let thinking = '';
    stream.on('thinking', (t) => (thinking += t));
    const final = await stream.finalMessage();
    assert.equal(thinking, REASONING);
    assert.equal(final.content[0].type, 'thinking');
    assert.equal(final.content[0].thinking, REASONING);
    assert.equal(final.content[1].text, REPLY);
  });

  test('raw events via create({stream: true})', async () => {
    const events = await client().messages.create({ ...params(), stream: true });
    const types = [];
    let text = '';
    for await (const ev of events) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    assert.equal(text, REPLY);
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
  });

  test('non-streamed reply', async () => {
    const msg = await client().messages.create(params());
    assert.equal(msg.content[0].text, REPLY);
    assert.equal(msg.usage.output_tokens, estimateTokens(REPLY));
  });

  test('a status fault surfaces as the typed error', async () => {
    const c = new Anthropic({ apiKey: 'k', baseURL: mock.url, maxRetries: 0, defaultHeaders: { 'x-mock-fault': 'status:529:4' } });
    await assert.rejects(c.messages.create(params()), (err) => {
      assert.ok(err instanceof Anthropic.APIError);
      assert.equal(err.status, 529);
      assert.equal(err.error.error.type, 'overloaded_error');
      assert.equal(err.headers.get('retry-after'), '4');
      return true;
    });
  });
});

describe('@google/genai', () => {
  const client = () => new GoogleGenAI({ apiKey: 'g-key', httpOptions: { baseUrl: mock.url } });
  const params = (system = SYSTEM) => ({ model: 'mock-alice', contents: 'Say hello', config: { systemInstruction: system } });

  test('generateContentStream yields the text and usage metadata', async () => {
    const stream = await client().models.generateContentStream(params());
    let text = '';
    let last;
    for await (const chunk of stream) {
      text += chunk.text ?? '';
      last = chunk;
    }
    assert.equal(text, REPLY);
    assert.equal(last.candidates[0].finishReason, 'STOP');
    assert.equal(last.usageMetadata.candidatesTokenCount, estimateTokens(REPLY));
    assert.equal(mock.requests()[0].path, '/v1beta/models/mock-alice:streamGenerateContent?alt=sse');
  });

  test('thought parts are kept apart from the answer', async () => {
    const stream = await client().models.generateContentStream(params(SYSTEM_REASONING));
    let thoughts = '';
    let answer = '';
    for await (const chunk of stream) {
      for (const part of chunk.candidates[0].content.parts) {
        if (part.thought) thoughts += part.text;
        else answer += part.text;
      }
    }
    assert.equal(thoughts, REASONING);
    assert.equal(answer, REPLY);
  });

  test('non-streamed generateContent', async () => {
    const res = await client().models.generateContent(params());
    assert.equal(res.text, REPLY);
    assert.equal(res.usageMetadata.totalTokenCount, res.usageMetadata.promptTokenCount + estimateTokens(REPLY));
  });

  test('a status fault surfaces as an ApiError with the status', async () => {
    const c = new GoogleGenAI({ apiKey: 'g', httpOptions: { baseUrl: mock.url, headers: { 'x-mock-fault': 'status:503' } } });
    await assert.rejects(c.models.generateContent(params()), (err) => {
      assert.equal(err.status, 503);
      assert.match(err.message, /UNAVAILABLE/);
      return true;
    });
  });
});

describe('ollama', () => {
  const client = () => new Ollama({ host: mock.url });
  const params = (system = SYSTEM) => ({ model: 'mock-alice', messages: [{ role: 'system', content: system }, { role: 'user', content: 'Say hello' }] });

  test('chat stream yields the text, thinking and the final counts', async () => {
    const stream = await client().chat({ ...params(SYSTEM_REASONING), stream: true });
    let text = '';
    let thinking = '';
    let last;
    for await (const part of stream) {
      text += part.message.content;
      thinking += part.message.thinking ?? '';
      last = part;
    }
    assert.equal(text, REPLY);
    assert.equal(thinking, REASONING);
    assert.equal(last.done, true);
    assert.equal(last.done_reason, 'stop');
    assert.equal(last.eval_count, estimateTokens(REPLY) + estimateTokens(REASONING));
  });

  test('non-streamed chat', async () => {
    const res = await client().chat(params());
    assert.equal(res.message.content, REPLY);
    assert.equal(res.eval_count, estimateTokens(REPLY));
  });

  test('a status fault surfaces as a ResponseError with the message', async () => {
    const c = new Ollama({ host: mock.url, headers: { 'x-mock-fault': 'status:500' } });
    await assert.rejects(c.chat(params()), (err) => {
      assert.equal(err.status_code, 500);
      assert.match(err.message, /mock fault/);
      return true;
    });
  });
});

// Tools: each SDK assembles the mock's tool-call frames into the scripted calls, and the mock
// answers the SDK-built tool-result request with text that includes the results.
describe('tool calls through each SDK', () => {
  const TOOL_SYSTEM = 'You are a helper.\nmock-tool: get_weather {"city":"Oslo","days":[1,2]}\nmock-tool: get_time {"tz":"Europe/Oslo"}';
  const WEATHER = { city: 'Oslo', days: [1, 2] };
  const TIME = { tz: 'Europe/Oslo' };
  const schema = { type: 'object', properties: {} };

  test('openai: the stream helper assembles parallel calls; the tool messages get the results back', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0 });
    const tools = ['get_weather', 'get_time'].map((name) => ({ type: 'function', function: { name, parameters: schema } }));
    const messages = [{ role: 'system', content: TOOL_SYSTEM }, { role: 'user', content: 'weather?' }];
    const final = await client.chat.completions.stream({ model: 'mock-alice', messages, tools }).finalChatCompletion();
    const msg = final.choices[0].message;
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(msg.tool_calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]), [['get_weather', WEATHER], ['get_time', TIME]]);
    const whole = await client.chat.completions.create({ model: 'mock-alice', messages, tools });
    assert.deepEqual(whole.choices[0].message.tool_calls.map((c) => c.function.name), ['get_weather', 'get_time']);
    const next = await client.chat.completions.create({ model: 'mock-alice', tools, messages: [...messages, msg,
      { role: 'tool', tool_call_id: msg.tool_calls[0].id, content: '{"temp":7}' },
      { role: 'tool', tool_call_id: msg.tool_calls[1].id, content: '10:30' }] });
    assert.equal(next.choices[0].message.content, 'Tool results: get_weather: {"temp":7}; get_time: 10:30');
  });

  test('@anthropic-ai/sdk: tool_use blocks with their input parsed from the input_json_delta stream', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0 });
    const tools = ['get_weather', 'get_time'].map((name) => ({ name, input_schema: schema }));
    const params = { model: 'mock-alice', max_tokens: 256, system: TOOL_SYSTEM, tools, messages: [{ role: 'user', content: 'weather?' }] };
    const stream = client.messages.stream(params);
    let json = '';
    stream.on('inputJson', (partial) => (json += partial));
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    assert.deepEqual(final.content.map((b) => [b.type, b.name, b.input]), [['tool_use', 'get_weather', WEATHER], ['tool_use', 'get_time', TIME]]);
    assert.equal(json, JSON.stringify(WEATHER) + JSON.stringify(TIME));
    const next = await client.messages.create({ ...params, messages: [...params.messages, { role: 'assistant', content: final.content },
      { role: 'user', content: final.content.map((b, i) => ({ type: 'tool_result', tool_use_id: b.id, content: ['{"temp":7}', '10:30'][i] })) }] });
    assert.equal(next.content[0].text, 'Tool results: get_weather: {"temp":7}; get_time: 10:30');
  });

  test('@google/genai: functionCalls from the stream and the whole reply; functionResponse parts get the results back', async () => {
    const client = new GoogleGenAI({ apiKey: 'g-key', httpOptions: { baseUrl: mock.url } });
    const config = { systemInstruction: TOOL_SYSTEM, tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: schema }, { name: 'get_time', parameters: schema }] }] };
    const calls = [];
    let finish;
    for await (const chunk of await client.models.generateContentStream({ model: 'mock-alice', contents: 'weather?', config })) {
      calls.push(...(chunk.functionCalls ?? []));
      finish = chunk.candidates[0].finishReason ?? finish;
    }
    assert.deepEqual(calls.map((c) => [c.name, c.args]), [['get_weather', WEATHER], ['get_time', TIME]]);
    assert.equal(finish, 'STOP');
    const whole = await client.models.generateContent({ model: 'mock-alice', contents: 'weather?', config });
    assert.deepEqual(whole.functionCalls.map((c) => c.name), ['get_weather', 'get_time']);
    const next = await client.models.generateContent({ model: 'mock-alice', config, contents: [
      { role: 'user', parts: [{ text: 'weather?' }] },
      { role: 'model', parts: whole.functionCalls.map((c) => ({ functionCall: c })) },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 7 } } }] }] });
    assert.equal(next.text, 'Tool results: get_weather: {"temp":7}');
  });

  test('ollama: message.tool_calls with object arguments; role tool messages get the results back', async () => {
    const client = new Ollama({ host: mock.url });
    const tools = ['get_weather', 'get_time'].map((name) => ({ type: 'function', function: { name, parameters: schema } }));
    const messages = [{ role: 'system', content: TOOL_SYSTEM }, { role: 'user', content: 'weather?' }];
    const calls = [];
    for await (const part of await client.chat({ model: 'mock-alice', messages, tools, stream: true })) calls.push(...(part.message.tool_calls ?? []));
    assert.deepEqual(calls.map((c) => [c.function.name, c.function.arguments]), [['get_weather', WEATHER], ['get_time', TIME]]);
    const next = await client.chat({ model: 'mock-alice', tools, messages: [...messages, { role: 'assistant', content: '', tool_calls: calls },
      { role: 'tool', tool_name: 'get_weather', content: '{"temp":7}' }] });
    assert.equal(next.message.content, 'Tool results: get_weather: {"temp":7}');
  });
});
