// test/helpers/fake-embeddings.ts: a loopback embeddings endpoint speaking the OpenAI-compatible
// `/v1/embeddings` and Gemini `:embedContent` wires. Vectors are hashed bags of words, so texts that
// share words are similar. Counts the calls it served.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const DIM = 64;

export function bagOfWords(text: string): number[] {
  const v = new Array<number>(DIM).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9-]+/g) ?? []) {
    let h = 0;
    for (const c of w) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % DIM] += 1;
  }
  return v;
}

export interface FakeEmbeddings {
  url: string;
  calls: { openai: number; gemini: number };
  close(): Promise<void>;
}

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const calls = { openai: 0, gemini: 0 };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v1/embeddings') {
        calls.openai++;
        const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
        res.end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: bagOfWords(t) })) }));
      } else if (req.url?.endsWith(':embedContent')) {
        calls.gemini++;
        res.end(JSON.stringify({ embedding: { values: bagOfWords(body.content.parts[0].text) } }));
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
