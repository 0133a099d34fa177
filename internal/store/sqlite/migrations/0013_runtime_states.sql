-- Runtime API states: named JSON payloads of a bot, a user, a conversation
-- (scope_id holds its internal id) or a workflow, with an optional idle
-- expiry. version counts writes, so that a patch never overwrites a write it
-- did not read.
CREATE TABLE runtime_states (
  id         TEXT PRIMARY KEY,
  bot_id     TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  type       TEXT NOT NULL,
  scope_id   TEXT NOT NULL,
  name       TEXT NOT NULL,
  payload    TEXT NOT NULL,
  expiry_ms  INTEGER,
  expires_at INTEGER,
  version    INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (bot_id, type, scope_id, name)
);
CREATE INDEX runtime_states_scope ON runtime_states(type, scope_id);
CREATE INDEX runtime_states_expiry ON runtime_states(expires_at) WHERE expires_at IS NOT NULL;
