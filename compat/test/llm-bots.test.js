// A bot that thinks, as bots are written for the hosted platform: the bot in
// llm-bot/ (@botpress/sdk 5.4.3 and @botpress/zai 2.6.21, whose
// @botpress/cognitive 0.5.4 calls the llm interface) is built and deployed
// with `bp deploy`, run by the server's Node bot host, and given the
// built-in openai integration; its users talk to it with @botpress/chat,
// and its answers come from a stand-in OpenAI-compatible model server
// (node:http on 127.0.0.1) that records what it is asked (docs/llm.md).
// agent-bot/ (the SDK and llmz 0.0.37, whose @botpress/cognitive is 0.3.3)
// is deployed the same way: the stand-in writes the agent's code, which
// calls the bot's tool and ends with the agent's exit.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Client as ChatClient } from '@botpress/chat'
import { Client } from '@botpress/client'
import { COMPLETION_TOKENS, PROMPT_TOKENS, startModelServer } from '../support/model.js'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const compat = path.resolve(import.meta.dirname, '..')
const bpBin = path.join(compat, 'node_modules/@botpress/cli/bin.js')
const WAIT_MS = 60_000 // a hang guard, never a speed requirement
const ANSWER = 'Walruses live on Arctic sea ice.'
// What a model writes for llmz: code after its start token, up to the stop
// sequence llmz asks for (where a model server stops).
const AGENT_CODE = "■fn_start\nconst t = await getTemperature({ city: 'Oslo' })\nreturn { action: 'answer', value: { text: `Oslo: ${t} degrees` } }\n"

/**
 * The stand-in model's answer to each kind of request the bots make, in
 * the format its caller parses: zai's operations (told apart by their
 * prompts), llmz's code, and a sentence for anything else.
 */
function standIn(body) {
  const asked = JSON.stringify(body.messages)
  const last = body.messages.at(-1)
  const lastText = typeof last.content === 'string' ? last.content : ''
  if (asked.includes('is about animals')) return '■TRUE■ walruses are animals ■END■'
  if (asked.includes('getTemperature')) return AGENT_CODE
  if (asked.includes('■json_start■')) return '■json_start■{"animal": "walrus", "legs": 0}■json_end■'
  if (asked.includes('Your task is to filter out the items')) {
    // Items "■<i> = <json>": the animals are kept.
    const items = [...lastText.matchAll(/■(\d+) = (.*)/g)]
    return items.map(([, i, item]) => `■${i}:${/walrus|seal/.test(item)}`).join('') + '■END■'
  }
  if (asked.includes('Format cheatsheet')) {
    // Each label asked for, "■<label>:【explanation …】:x■".
    const labels = [...new Set([...lastText.matchAll(/■(\w+):【explanation/g)].map((m) => m[1]))]
    return labels.map((l) => `■${l}:【as the input says】:${l === 'animal' ? 'ABSOLUTELY_YES' : 'ABSOLUTELY_NOT'}■`).join('\n') + '\n■END■'
  }
  if (asked.includes('Rewrite the text between')) {
    const original = lastText.slice(lastText.indexOf('■START■') + '■START■'.length, lastText.indexOf('■END■')).trim()
    return `■START■${original.toUpperCase()}■END■`
  }
  if (asked.includes('You are summarizing a text')) return '■START■Walruses: Arctic sea ice.■END■'
  return ANSWER
}

let model, server, client, home
const projects = []

/** Copies a bot's sources into a new project inside its directory, so that the bundle finds its node_modules. */
async function newProject(dir) {
  const botDir = path.join(compat, dir)
  const project = await fs.mkdtemp(path.join(botDir, '.project-'))
  projects.push(project)
  await fs.cp(path.join(botDir, 'src'), path.join(project, 'src'), { recursive: true })
  await fs.copyFile(path.join(botDir, 'package.json'), path.join(project, 'package.json'))
  return project
}

/** Runs bp in a bot's project to the end; rejects with its output when it fails. */
function bp(project, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bpBin, ...args], { cwd: project, env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      code === 0 ? resolve(out) : reject(new Error(`bp ${args.join(' ')} exited ${code}:\n${out}`))
    })
  })
}

before(async () => {
  // zai's check is answered TRUE, anything else with ANSWER.
  model = await startModelServer(standIn)
  server = await startServer({ args: ['--ai-url', model.url, '--ai-model', 'llama-8b', '--ai-prices', '{"llama-8b":{"input":1,"output":2}}'] })
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'bp-home-'))
  await bp(compat, ['login', '--apiUrl', server.apiUrl, '--token', server.token, '--workspaceId', server.workspaceId, '-y'])
})

after(async () => {
  await server?.stop()
  await model?.close()
  for (const project of projects) await fs.rm(project, { recursive: true, force: true })
  if (home) await fs.rm(home, { recursive: true, force: true })
})

/**
 * Deploys the bot of dir with bp, gives it the built-in openai integration
 * and opens a conversation with it: ask(text) sends text as a user and
 * resolves to the bot's reply.
 */
async function deployAndTalk(dir) {
  const out = await bp(await newProject(dir), ['deploy', '-y', '--createNewBot'])
  const id = out.match(/Bot created with ID "([^"]+)"/)?.[1]
  assert.ok(id, `no bot id in:\n${out}`)
  const { bot } = await client.updateBot({ id, maxExecutionTime: 60, integrations: { openai: { integrationId: 'intver_01builtinopenai00000000', enabled: true } } })
  assert.equal(bot.integrations.intver_01builtinopenai00000000.status, 'registered')

  const chat = await ChatClient.connect({ apiUrl: bot.integrations.chat.webhookUrl })
  const { conversation } = await chat.createConversation({})
  const listener = await chat.listenConversation({ id: conversation.id })
  const replies = []
  listener.on('message_created', (m) => {
    if (m.userId !== chat.user.id) replies.push(m.payload.text)
  })
  const ask = async (text) => {
    const n = replies.length + 1
    await chat.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } })
    const deadline = Date.now() + WAIT_MS
    while (replies.length < n) {
      if (Date.now() > deadline) {
        const { logs } = await client.getBotLogs({ id, timeStart: '2020-01-01T00:00:00Z' })
        throw new Error(`no reply to ${JSON.stringify(text)} within ${WAIT_MS} ms; the bot's logs:\n${logs.map((l) => `${l.level} ${l.message}`).join('\n')}`)
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    return replies[n - 1]
  }
  return { ask, close: () => listener.disconnect() }
}

test('bp deploy of a bot using @botpress/zai: its answers come from the operator\'s model server, priced in AI Spend', async () => {
  const { ask, close } = await deployAndTalk('llm-bot')

  assert.equal(await ask('where do walruses live?'), ANSWER)
  const asked = model.requests.at(-1)
  assert.equal(asked.model, 'llama-8b')
  assert.ok(JSON.stringify(asked.messages).includes('where do walruses live?'), JSON.stringify(asked.messages))
  assert.equal(await ask('check:a walrus eats clams'), 'yes')
  // zai's other operations, each parsed from the stand-in's answer.
  assert.deepEqual(JSON.parse(await ask('extract:The walrus has no legs but flippers.')), { animal: 'walrus', legs: 0 })
  assert.deepEqual(JSON.parse(await ask('filter:walrus,oak,seal')), ['walrus', 'seal'])
  assert.deepEqual(JSON.parse(await ask('label:A walrus on the ice')), { animal: true, plant: false })
  assert.equal(await ask('rewrite:walruses live on ice'), 'WALRUSES LIVE ON ICE')
  assert.equal(await ask('summarize:Walruses live on the sea ice of the Arctic, where they rest between dives.'), 'Walruses: Arctic sea ice.')
  // @botpress/cognitive's beta path from the bot: /v2/cognitive with the bot's key.
  const v2 = model.requests.length
  assert.equal(await ask('beta:where do walruses rest?'), ANSWER)
  assert.equal(model.requests.length, v2 + 1)
  assert.deepEqual(model.requests.at(-1).messages, [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: 'where do walruses rest?' },
  ])
  close()

  // Every model call the bot made is in the workspace's AI Spend.
  const calls = model.requests.length
  const { usages } = await client.listWorkspaceUsages({ id: server.workspaceId, type: 'ai_spend' })
  const want = (calls * (PROMPT_TOKENS * 1 + COMPLETION_TOKENS * 2)) / 1e6
  assert.ok(Math.abs(usages[0].value - want) < 1e-9, `AI Spend ${usages[0].value}, want ${want} for ${calls} calls`)
})

test('bp deploy of a bot running an llmz agent: the model\'s code calls the bot\'s tool and ends with its exit', async () => {
  const { ask, close } = await deployAndTalk('agent-bot')
  const before = model.requests.length
  assert.equal(await ask('Tell the temperature in Oslo'), 'Oslo: -3 degrees')
  close()
  // One model call: llmz's system prompt with the tool's typings and the
  // bot's instructions, and llmz's stop sequence passed on to the model.
  assert.equal(model.requests.length, before + 1)
  const asked = model.requests.at(-1)
  assert.deepEqual(asked.stop, ['■fn_end'])
  assert.equal(asked.model, 'llama-8b')
  assert.equal(asked.messages[0].role, 'system')
  assert.match(asked.messages[0].content, /getTemperature/)
  assert.match(asked.messages[0].content, /Tell the temperature in Oslo/)
})
