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

  // The Runtime and Tables API operations of the official client, served
  // by the server as for a bot calling over HTTP: method and path, the path's
  // {params} taken from the request, the rest in the query (GET, DELETE) or
  // the body.
  const operations = {
    createUser: 'POST /v1/chat/users', getOrCreateUser: 'POST /v1/chat/users/get-or-create', listUsers: 'GET /v1/chat/users',
    updateUser: 'PUT /v1/chat/users/{id}', deleteUser: 'DELETE /v1/chat/users/{id}',
    createConversation: 'POST /v1/chat/conversations', getOrCreateConversation: 'POST /v1/chat/conversations/get-or-create',
    listConversations: 'GET /v1/chat/conversations', updateConversation: 'PUT /v1/chat/conversations/{id}',
    deleteConversation: 'DELETE /v1/chat/conversations/{id}', addParticipant: 'POST /v1/chat/conversations/{id}/participants',
    getParticipant: 'GET /v1/chat/conversations/{id}/participants/{userId}', removeParticipant: 'DELETE /v1/chat/conversations/{id}/participants/{userId}',
    getOrCreateMessage: 'POST /v1/chat/messages/get-or-create', updateMessage: 'PUT /v1/chat/messages/{id}',
    deleteMessage: 'DELETE /v1/chat/messages/{id}', importMessages: 'POST /v1/chat/messages/import-messages',
    listTagValues: 'GET /v1/chat/tags/{key}/values',
    getEvent: 'GET /v1/chat/events/{id}', listEvents: 'GET /v1/chat/events', cancelScheduledEvent: 'DELETE /v1/chat/events/scheduled/{id}',
    getState: 'GET /v1/chat/states/{type}/{id}/{name}', setState: 'POST /v1/chat/states/{type}/{id}/{name}',
    getOrSetState: 'POST /v1/chat/states/{type}/{id}/{name}/get-or-set', patchState: 'PATCH /v1/chat/states/{type}/{id}/{name}',
    setStateExpiry: 'POST /v1/chat/states/{type}/{id}/{name}/expiry',
    createWorkflow: 'POST /v1/chat/workflows', getOrCreateWorkflow: 'POST /v1/chat/workflows/get-or-create', listWorkflows: 'GET /v1/chat/workflows',
    getWorkflow: 'GET /v1/chat/workflows/{id}', updateWorkflow: 'PUT /v1/chat/workflows/{id}', deleteWorkflow: 'DELETE /v1/chat/workflows/{id}',
    trackAnalytics: 'POST /v1/chat/analytics', captureObservation: 'POST /v1/chat/observations',
    listTables: 'GET /v1/tables', createTable: 'POST /v1/tables', getTable: 'GET /v1/tables/{table}', getOrCreateTable: 'POST /v1/tables/{table}',
    updateTable: 'PUT /v1/tables/{table}', deleteTable: 'DELETE /v1/tables/{table}', renameTableColumn: 'PUT /v1/tables/{table}/column',
    duplicateTable: 'POST /v1/tables/{sourceTableId}/duplicate', getTableRow: 'GET /v1/tables/{table}/row',
    findTableRows: 'POST /v1/tables/{table}/rows/find', createTableRows: 'POST /v1/tables/{table}/rows',
    updateTableRows: 'PUT /v1/tables/{table}/rows', upsertTableRows: 'POST /v1/tables/{table}/rows/upsert',
    deleteTableRows: 'POST /v1/tables/{table}/rows/delete', exportTable: 'GET /v1/tables/{table}/export',
    importTable: 'POST /v1/tables/{table}/import', getTableJobs: 'GET /v1/tables/{table}/jobs',
  }

  // query encodes as the official client does: arrays repeat their key,
  // objects use dots (tags.k=v).
  const query = (obj) => {
    const parts = []
    const add = (key, v) => {
      if (v === undefined || v === null) return
      if (Array.isArray(v)) v.forEach((x) => add(key, x))
      else if (typeof v === 'object') Object.keys(v).forEach((k) => add(key + '.' + k, v[k]))
      else parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(String(v)))
    }
    Object.keys(obj).forEach((k) => add(k, obj[k]))
    return parts.join('&')
  }

  const operation = (spec) =>
    async function (req) {
      const rest = Object.assign({}, req)
      const [method, template] = spec.split(' ')
      const path = template.replace(/\{(\w+)\}/g, (_, name) => {
        const v = rest[name]
        delete rest[name]
        if (v === undefined || v === null || v === '') {
          const err = new Error(name + ': is required')
          err.type = 'InvalidPayload'
          throw err
        }
        return encodeURIComponent(String(v))
      })
      const inQuery = method === 'GET' || method === 'DELETE'
      return call('api', { method, path, query: inQuery ? query(rest) : '', body: inQuery ? undefined : rest })
    }

  const api = {}
  Object.keys(operations).forEach((name) => {
    api[name] = operation(operations[name])
  })

  const client = Object.freeze(Object.assign(api, {
    async createMessage(req) {
      let data = Object.assign({}, req)
      const hooks = matching(registry.beforeOutgoingMessage, data.payload && data.payload.type)
      if (hooks.length === 0) {
        // The server gives the message the id outgoingEvent would have.
        return call('createMessage', data)
      }
      const event = call('outgoingEvent', data)
      event.state = currentState
      for (const h of hooks) {
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
      if (typeof req.type === 'string' && req.type.includes(':')) {
        // "<alias>:<action>": an integration the bot installed runs it.
        return call('api', { method: 'POST', path: '/v1/chat/actions', query: '', body: { type: req.type, input: req.input || {} } })
      }
      return { output: await runAction(req.type, req.input) }
    },
  }))

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

  // fetch: outbound HTTP to the hosts the bot's allowlist names (off
  // without one), answered as a Response of its text.
  const fetch = async (resource, init) => {
    init = init || {}
    let headers = init.headers || {}
    if (typeof headers.forEach === 'function' && !Array.isArray(headers)) {
      const h = {}
      headers.forEach((v, k) => (h[k] = v))
      headers = h
    } else if (Array.isArray(headers)) {
      headers = Object.fromEntries(headers)
    }
    const out = call('fetch', {
      url: String(resource && resource.url ? resource.url : resource),
      method: init.method,
      headers,
      body: init.body === undefined || init.body === null ? undefined : String(init.body),
    })
    return Object.freeze({
      ok: out.status >= 200 && out.status < 300,
      status: out.status,
      statusText: out.statusText,
      url: out.url,
      headers: Object.freeze({ get: (name) => (out.headers[String(name).toLowerCase()] ?? null), has: (name) => String(name).toLowerCase() in out.headers }),
      text: async () => out.body,
      json: async () => JSON.parse(out.body),
    })
  }

  globalThis.bot = bot
  globalThis.console = console
  globalThis.fetch = fetch
  return { handle, action }
})
