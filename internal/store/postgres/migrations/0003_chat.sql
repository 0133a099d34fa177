-- Chat API: users, conversations, participants, messages, custom events.
-- fid is the id clients see: the foreign id given at creation, else the id.
CREATE TABLE chat_users (
  id          TEXT PRIMARY KEY,
  bot_id      TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  fid         TEXT NOT NULL,
  name        TEXT NOT NULL DEFAULT '',
  picture_url TEXT NOT NULL DEFAULT '',
  profile     TEXT NOT NULL DEFAULT '',
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  UNIQUE (bot_id, fid)
);

CREATE TABLE conversations (
  id         TEXT PRIMARY KEY,
  bot_id     TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  fid        TEXT NOT NULL,
  owner_id   TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (bot_id, fid)
);
CREATE INDEX conversations_owner ON conversations(owner_id, id);

CREATE TABLE participants (
  conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  user_id         TEXT NOT NULL REFERENCES chat_users(id) ON DELETE CASCADE,
  created_at      BIGINT NOT NULL,
  PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX participants_user ON participants(user_id);

CREATE TABLE messages (
  id              TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  user_id         TEXT NOT NULL,
  payload         TEXT NOT NULL,
  metadata        TEXT,
  is_bot          BOOLEAN NOT NULL,
  created_at      BIGINT NOT NULL
);
CREATE INDEX messages_conversation ON messages(conversation_id, created_at, id);

CREATE TABLE chat_events (
  id              TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  user_id         TEXT NOT NULL,
  payload         TEXT NOT NULL,
  is_bot          BOOLEAN NOT NULL,
  created_at      BIGINT NOT NULL
);
