-- Runtime API: tags on chat users, conversations and messages. The JSON
-- column is what a read returns; the tag tables are what filters and
-- listTagValues use (one row per key, indexed by bot, key and value).
ALTER TABLE chat_users ADD COLUMN tags TEXT NOT NULL DEFAULT '{}';
ALTER TABLE conversations ADD COLUMN tags TEXT NOT NULL DEFAULT '{}';
ALTER TABLE conversations ADD COLUMN channel TEXT NOT NULL DEFAULT 'channel';
ALTER TABLE conversations ADD COLUMN integration TEXT NOT NULL DEFAULT 'chat';
ALTER TABLE messages ADD COLUMN tags TEXT NOT NULL DEFAULT '{}';
-- 0: never updated since its creation.
ALTER TABLE messages ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;

CREATE TABLE chat_user_tags (
  user_id TEXT NOT NULL REFERENCES chat_users(id) ON DELETE CASCADE,
  bot_id  TEXT NOT NULL,
  key     TEXT NOT NULL,
  value   TEXT NOT NULL,
  PRIMARY KEY (user_id, key)
);
CREATE INDEX chat_user_tags_bot ON chat_user_tags(bot_id, key, value);

CREATE TABLE conversation_tags (
  conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  bot_id          TEXT NOT NULL,
  key             TEXT NOT NULL,
  value           TEXT NOT NULL,
  PRIMARY KEY (conversation_id, key)
);
CREATE INDEX conversation_tags_bot ON conversation_tags(bot_id, key, value);

CREATE TABLE message_tags (
  message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  bot_id     TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (message_id, key)
);
CREATE INDEX message_tags_bot ON message_tags(bot_id, key, value);

-- A bot's users and conversations listed by date.
CREATE INDEX chat_users_bot_created ON chat_users(bot_id, created_at, id);
CREATE INDEX conversations_bot_created ON conversations(bot_id, created_at, id);
