// Drives kvprefix serve with the official OpenAI Node SDK (openai on npm), as an application would.
// Usage: node drive.mjs BASE_URL MODEL MODE PROMPT_JSON MAX_TOKENS
//   MODE: stream-completion | stream-chat | complete | stream-until-error | unknown-model
// Prints one JSON line with what the SDK handed back. OPENAI_SDK_DIR is the npm prefix holding node_modules/openai.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { default: OpenAI, APIError } = await import(
  pathToFileURL(join(process.env.OPENAI_SDK_DIR, 'node_modules', 'openai', 'index.mjs')).href);
const [baseURL, model, mode, promptJson, maxTokens] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'not-used', maxRetries: 0, timeout: 120_000 });
const prompt = JSON.parse(promptJson);
const max_tokens = Number(maxTokens);

function headersOf(response) {
  return {
    worker: response.headers.get('x-kvprefix-worker'),
    cachedBlocks: response.headers.get('x-kvprefix-cached-blocks'),
    route: response.headers.get('x-kvprefix-route'),
  };
}

async function drain(stream, text) {
  let chunks = 0, usage = null, finish = null, out = '';
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices ?? []) {
      out += text(c) ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  return { chunks, usage, finish, text: out };
}

async function main() {
  switch (mode) {
    case 'stream-completion': {
      const { data, response } = await client.completions
        .create({ model, prompt, max_tokens, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      return { ...headersOf(response), ...(await drain(data, (c) => c.text)) };
    }
    case 'stream-chat': {
      const { data, response } = await client.chat.completions
        .create({ model, messages: prompt, max_tokens, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      return { ...headersOf(response), ...(await drain(data, (c) => c.delta?.content)) };
    }
    case 'complete': {
      const { data, response } = await client.completions.create({ model, prompt, max_tokens }).withResponse();
      return { ...headersOf(response), usage: data.usage, finish: data.choices[0].finish_reason, text: data.choices[0].text };
    }
    case 'stream-until-error': {
      const stream = await client.completions.create({ model, prompt, max_tokens, stream: true });
      let chunks = 0;
      try {
        for await (const chunk of stream) {
          chunks++;
          if (chunks === 3) process.stdout.write(JSON.stringify({ streaming: true }) + '\n'); // the test kills the engine now
        }
        return { chunks, error: null };
      } catch (e) {
        return { chunks, error: { api: e instanceof APIError, code: e.error?.code ?? e.code ?? null, message: String(e.message) } };
      }
    }
    case 'unknown-model': {
      try {
        await client.completions.create({ model, prompt, max_tokens });
        return { error: null };
      } catch (e) {
        return { error: { api: e instanceof APIError, status: e.status, code: e.code, type: e.type, message: e.message } };
      }
    }
    default:
      throw new Error('unknown mode ' + mode);
  }
}

process.stdout.write(JSON.stringify(await main()) + '\n');
