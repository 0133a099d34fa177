// The programming model bot code sees: the global `bot` (handlers, hooks,
// actions) and `console`. It runs once in every fresh VM, before the bot's
// code, and returns the entry points the server calls. `native` holds the
// server's functions; they take and return JSON text.
(function (native) {
  'use strict'
  const registry = {
    message: [],
    event: [],
    beforeIncomingEvent: [],
    beforeOutgoingMessage: [],
    actions: Object.create(null),
  }

  const register = (list, what) =>
    function (type, fn) {
      if (typeof type === 'function' && fn === undefined) {
        fn = type
        type = '*'
      }
      if (typeof type !== 'string' || type === '') {
        throw new TypeError(what + ': the first argument must be a type name or "*"')
      }
      if (typeof fn !== 'function') {
        throw new TypeError(what + ': the handler must be a function')
      }
      list.push({ type, fn })
    }

  const bot = {
    on: Object.freeze({
      message: register(registry.message, 'bot.on.message'),
      event: register(registry.event, 'bot.on.event'),
    }),
    hook: Object.freeze({
      beforeIncomingEvent: register(registry.beforeIncomingEvent, 'bot.hook.beforeIncomingEvent'),
      beforeOutgoingMessage: register(registry.beforeOutgoingMessage, 'bot.hook.beforeOutgoingMessage'),
    }),
    action(name, fn) {
      if (typeof name !== 'string' || name === '') {
        throw new TypeError('bot.action: the first argument must be the action name')
      }
      if (typeof fn !== 'function') {
        throw new TypeError('bot.action: the handler must be a function')
      }
      registry.actions[name] = fn
    },
  }
  Object.freeze(bot)

  const inspect = (v) => {
    if (typeof v === 'string') return v
    if (v instanceof Error) return v.stack || String(v)
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return String(v)
    try {
      const s = JSON.stringify(v)
      return s === undefined ? String(v) : s
    } catch (e) {
      return String(v)
    }
  }
  const line = (level) =>
    function () {
      native.log(level, Array.prototype.map.call(arguments, inspect).join(' '))
    }
  const logger = Object.freeze({ debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') })
  const console = Object.freeze({
    log: logger.info,
    info: logger.info,
    debug: logger.debug,
    warn: logger.warn,
    error: logger.error,
  })

  // call runs a server function: JSON in, JSON out, errors thrown as Error
  // with the API's error type in `type`.
  const call = (name, req) => {
    const out = JSON.parse(native[name](JSON.stringify(req === undefined ? {} : req)))
    if (out && out.__error) {
      const err = new Error(out.__error.message)
      err.type = out.__error.type
      throw err
    }
    return out
  }

  const matching = (list, type) => list.filter((h) => h.type === '*' || h.type === type)

  let ctx = {}
  let currentState = { bot: null, user: null, conversation: null }
  let currentEvent = null

  const runAction = async (type, input) => {
    const fn = registry.actions[type]
    if (!fn) {
      const err = new Error('action "' + type + '" is not defined by the bot\'s code')
      err.type = 'ResourceNotFound'
      throw err
    }
    return await fn({ type, input: input === undefined ? {} : input, client, ctx, logger })
  }

  const client = Object.freeze({
    async createMessage(req) {
      let data = Object.assign({}, req)
      const event = call('outgoingEvent', data)
      event.state = currentState
      for (const h of matching(registry.beforeOutgoingMessage, data.payload && data.payload.type)) {
        const r = await h.fn({ data, event, client, ctx, logger })
        if (r && r.stop) return { message: undefined }
        if (r && r.data) data = r.data
      }
      return call('createMessage', Object.assign({}, data, { __eventId: event.id }))
    },
    async createEvent(req) {
      return call('createEvent', req)
    },
    async scheduleEvent(req) {
      return call('scheduleEvent', req)
    },
    async getConversation(req) {
      return call('getConversation', req)
    },
    async getUser(req) {
      return call('getUser', req)
    },
    async getMessage(req) {
      return call('getMessage', req)
    },
    async listMessages(req) {
      return call('listMessages', req)
    },
    async listParticipants(req) {
      return call('listParticipants', req)
    },
    async searchFiles(req) {
      const out = call('searchFiles', req)
      if (currentEvent) {
        const kb = currentEvent.kb || (currentEvent.kb = { included: [], results: [] })
        for (const id of out.knowledgeBases) {
          if (!kb.included.includes(id)) kb.included.push(id)
        }
        kb.results.push(...out.passages)
      }
      return { passages: out.passages }
    },
    async callAction(req) {
      req = req || {}
      return { output: await runAction(req.type, req.input) }
    },
  })

  const serializeState = (state) => {
    const out = {}
    for (const scope of ['bot', 'user', 'conversation']) {
      const v = state[scope]
      if (v !== null && v !== undefined) {
        if (typeof v !== 'object' || Array.isArray(v)) {
          throw new TypeError('event.state.' + scope + ' must stay an object')
        }
        out[scope] = JSON.stringify(v)
      }
    }
    return out
  }

  // handle runs one incoming event through the hooks and the handlers.
  const handle = async (eventJSON, messageJSON, conversationJSON, ctxJSON) => {
    ctx = JSON.parse(ctxJSON)
    let event = JSON.parse(eventJSON)
    const state = event.state
    currentState = state
    currentEvent = event
    const message = messageJSON ? JSON.parse(messageJSON) : undefined
    const conversation = conversationJSON ? JSON.parse(conversationJSON) : undefined
    for (const h of matching(registry.beforeIncomingEvent, event.type)) {
      const r = await h.fn({ data: event, event, client, ctx, logger })
      if (r && r.stop) return { stopped: true, state: serializeState(state) }
      if (r && r.data) event = currentEvent = r.data
    }
    const args = { event, message, conversation, client, ctx, logger, state }
    const handlers =
      event.type === 'message'
        ? matching(registry.message, event.payload && event.payload.type)
        : matching(registry.event, event.type)
    for (const h of handlers) {
      await h.fn(args)
    }
    return { stopped: false, handlers: handlers.length, state: serializeState(state) }
  }

  // action runs a named action called through the API.
  const action = async (type, inputJSON, ctxJSON) => {
    ctx = JSON.parse(ctxJSON)
    currentState = { bot: null, user: null, conversation: null }
    currentEvent = null
    if (!registry.actions[type]) return null
    const output = await runAction(type, JSON.parse(inputJSON))
    return String(JSON.stringify(output === undefined ? {} : output))
  }

  globalThis.bot = bot
  globalThis.console = console
  return { handle, action }
})
