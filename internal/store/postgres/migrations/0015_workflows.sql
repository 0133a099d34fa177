-- Runtime API workflows: durable records of a bot's long-running work.
-- conversation_id and user_id are internal ids; version counts writes.
CREATE TABLE workflows (
  id              TEXT PRIMARY KEY,
  bot_id          TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name            TEXT NOT NULL,
  status          TEXT NOT NULL,
  input           TEXT NOT NULL,
  output          TEXT NOT NULL,
  parent_id       TEXT NOT NULL DEFAULT '',
  conversation_id TEXT NOT NULL DEFAULT '',
  user_id         TEXT NOT NULL DEFAULT '',
  tags            TEXT NOT NULL DEFAULT '{}',
  failure_reason  TEXT NOT NULL DEFAULT '',
  event_id        TEXT NOT NULL DEFAULT '',
  timeout_at      BIGINT NOT NULL,
  completed_at    BIGINT,
  version         BIGINT NOT NULL,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE INDEX workflows_bot ON workflows(bot_id, created_at, id);
CREATE INDEX workflows_conversation ON workflows(conversation_id) WHERE conversation_id <> '';
CREATE INDEX workflows_user ON workflows(user_id) WHERE user_id <> '';

CREATE TABLE workflow_tags (
  workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  bot_id      TEXT NOT NULL,
  key         TEXT NOT NULL,
  value       TEXT NOT NULL,
  PRIMARY KEY (workflow_id, key)
);
CREATE INDEX workflow_tags_bot ON workflow_tags(bot_id, key, value);
