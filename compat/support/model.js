// A stand-in OpenAI-compatible model server for the tests of a bot's LLM
// calls (docs/llm.md): node:http on 127.0.0.1, POST /v1/chat/completions
// only; it records every request body and answers with answer(body) (by
// default "answer to <the last user message's text>"), streamed as
// server-sent events, a word a chunk, when asked.

import http from 'node:http'

export const PROMPT_TOKENS = 40
export const COMPLETION_TOKENS = 7

const lastUserText = (body) => {
  const last = body.messages.filter((m) => m.role === 'user').at(-1)
  return typeof last.content === 'string' ? last.content : last.content.map((p) => p.text ?? '').join('')
}

export async function startModelServer(answer = (body) => `answer to ${lastUserText(body)}`, { host = '127.0.0.1' } = {}) {
  const requests = []
  const srv = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end()
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      requests.push(body)
      const text = answer(body)
      const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: COMPLETION_TOKENS, total_tokens: PROMPT_TOKENS + COMPLETION_TOKENS }
      if (!body.stream) {
        res.writeHead(200, { 'Content-Type': 'application/json' })
        res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', model: body.model, usage,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] }))
        return
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      const send = (o) => res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: body.model, ...o })}\n\n`)
      for (const word of text.split(/(?<= )/)) send({ choices: [{ index: 0, delta: { content: word }, finish_reason: null }] })
      send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })
      if (body.stream_options?.include_usage) send({ choices: [], usage })
      res.end('data: [DONE]\n\n')
    })
  })
  await new Promise((resolve) => srv.listen(0, host, resolve))
  return { url: `http://${host}:${srv.address().port}/v1`, requests, close: () => new Promise((r) => srv.close(r)) }
}
