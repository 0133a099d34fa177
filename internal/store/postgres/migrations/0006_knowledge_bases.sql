-- Knowledge bases: named sets of a bot's indexed files (the files tagged
-- kbId = the knowledge base's id), with tags of their own.
CREATE TABLE knowledge_bases (
  id         TEXT PRIMARY KEY,
  bot_id     TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX knowledge_bases_bot ON knowledge_bases(bot_id, id);

CREATE TABLE knowledge_base_tags (
  kb_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  key   TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (kb_id, key)
);
