-- Tables API jobs: the exports and imports of a table, with their outcome.
CREATE TABLE table_jobs (
  id             TEXT PRIMARY KEY,
  bot_id         TEXT NOT NULL,
  table_id       TEXT NOT NULL REFERENCES bot_tables(id) ON DELETE CASCADE,
  type           TEXT NOT NULL,
  status         TEXT NOT NULL,
  progress       REAL NOT NULL DEFAULT 0,
  input_file_id  TEXT NOT NULL DEFAULT '',
  output_file_id TEXT NOT NULL DEFAULT '',
  failure        TEXT NOT NULL DEFAULT '',
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);
CREATE INDEX table_jobs_table ON table_jobs(table_id, created_at);
