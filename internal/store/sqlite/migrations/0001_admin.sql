-- Accounts, workspaces, members, tokens, bots and their integrations, logs.
-- Times are Unix microseconds (UTC) so both dialects compare and sort alike.
CREATE TABLE accounts (
  id           TEXT PRIMARY KEY,
  email        TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL DEFAULT '',
  created_at   INTEGER NOT NULL
);

CREATE TABLE pats (
  id         TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  note       TEXT NOT NULL,
  hash       BLOB NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX pats_account ON pats(account_id, id);

CREATE TABLE workspaces (
  id              TEXT PRIMARY KEY,
  name            TEXT NOT NULL,
  owner_id        TEXT NOT NULL REFERENCES accounts(id),
  plan            TEXT NOT NULL,
  billing_version TEXT NOT NULL,
  blocked         INTEGER NOT NULL DEFAULT 0,
  spending_limit  INTEGER NOT NULL,
  profile         TEXT NOT NULL DEFAULT '{}',
  handle          TEXT UNIQUE,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);

CREATE TABLE members (
  id           TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  role         TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  UNIQUE (workspace_id, account_id)
);
CREATE INDEX members_account ON members(account_id, workspace_id);

CREATE TABLE bots (
  id             TEXT PRIMARY KEY,
  workspace_id   TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name           TEXT NOT NULL,
  dev            INTEGER NOT NULL,
  type           TEXT NOT NULL,
  status         TEXT NOT NULL,
  tags           TEXT NOT NULL DEFAULT '{}',
  deployed_at    INTEGER,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  signing_secret TEXT NOT NULL,
  created_by     TEXT NOT NULL DEFAULT '',
  -- Large columns last: listings read the columns before them without
  -- walking the overflow pages of a big bot's code.
  spec           TEXT NOT NULL,
  code           TEXT NOT NULL DEFAULT ''
);
CREATE INDEX bots_ws_created ON bots(workspace_id, dev, created_at, id);
CREATE INDEX bots_ws_updated ON bots(workspace_id, dev, updated_at, id);

CREATE TABLE bot_tags (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  key    TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (bot_id, key)
);
CREATE INDEX bot_tags_kv ON bot_tags(key, value);

CREATE TABLE bot_integrations (
  bot_id            TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  integration_id    TEXT NOT NULL,
  name              TEXT NOT NULL,
  version           TEXT NOT NULL,
  webhook_id        TEXT NOT NULL UNIQUE,
  enabled           INTEGER NOT NULL,
  configuration     TEXT NOT NULL,
  disabled_channels TEXT NOT NULL,
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL,
  PRIMARY KEY (bot_id, integration_id)
);

CREATE TABLE bot_keys (
  id         TEXT PRIMARY KEY,
  bot_id     TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  note       TEXT NOT NULL,
  hash       BLOB NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX bot_keys_bot ON bot_keys(bot_id, id);

CREATE TABLE bot_logs (
  id              TEXT PRIMARY KEY,
  bot_id          TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  ts              INTEGER NOT NULL,
  level           TEXT NOT NULL,
  message         TEXT NOT NULL,
  user_id         TEXT NOT NULL DEFAULT '',
  conversation_id TEXT NOT NULL DEFAULT '',
  workflow_id     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX bot_logs_bot_ts ON bot_logs(bot_id, ts, id);
