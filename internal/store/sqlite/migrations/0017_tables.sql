-- Tables API: a bot's tables. Each table's rows live in a table of their
-- own, rows_<id without its prefix>, with one column per entry of columns
-- (JSON: name, database column, kind), created and dropped with it.
CREATE TABLE bot_tables (
  id         TEXT PRIMARY KEY,
  bot_id     TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  schema     TEXT NOT NULL,
  columns    TEXT NOT NULL,
  key_column TEXT NOT NULL DEFAULT '',
  frozen     INTEGER NOT NULL DEFAULT 0,
  factor     INTEGER NOT NULL DEFAULT 1,
  tags       TEXT NOT NULL DEFAULT '{}',
  compute    INTEGER NOT NULL DEFAULT 0,
  version    INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (bot_id, name)
);

CREATE TABLE bot_table_tags (
  table_id TEXT NOT NULL REFERENCES bot_tables(id) ON DELETE CASCADE,
  bot_id   TEXT NOT NULL,
  key      TEXT NOT NULL,
  value    TEXT NOT NULL,
  PRIMARY KEY (table_id, key)
);
CREATE INDEX bot_table_tags_bot ON bot_table_tags(bot_id, key, value);
