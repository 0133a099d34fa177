-- Bot versions: immutable snapshots of a bot's code, name, tags and
-- definition (spec, secrets removed), numbered per bot by seq. The newest
-- ones are kept (--bot-versions-keep); a bot's go with it.
CREATE TABLE bot_versions (
  id          TEXT PRIMARY KEY,
  bot_id      TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,
  name        TEXT NOT NULL,
  description TEXT NOT NULL,
  bot_name    TEXT NOT NULL,
  code        TEXT NOT NULL,
  tags        TEXT NOT NULL,
  spec        TEXT NOT NULL,
  digest      TEXT NOT NULL,
  created_by  TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  UNIQUE (bot_id, seq)
);
