-- Files of bots, their tag index, workspace storage usage and quotas, the
-- background job queue, and server secrets (URL signing keys).
CREATE TABLE files (
  id              TEXT PRIMARY KEY,
  bot_id          TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  workspace_id    TEXT NOT NULL,
  scope           TEXT NOT NULL,
  key             TEXT NOT NULL,
  status          TEXT NOT NULL,
  size            INTEGER,
  declared_size   INTEGER NOT NULL,
  content_type    TEXT NOT NULL,
  tags            TEXT NOT NULL,
  metadata        TEXT NOT NULL,
  access_policies TEXT NOT NULL,
  shared          INTEGER NOT NULL,
  index_requested INTEGER NOT NULL,
  public_now      INTEGER NOT NULL,
  failed_reason   TEXT NOT NULL DEFAULT '',
  indexing_stack  TEXT NOT NULL DEFAULT '',
  expires_at      INTEGER,
  owner           TEXT NOT NULL,
  generation      INTEGER NOT NULL,
  blob_key        TEXT NOT NULL DEFAULT '',
  sha256          TEXT NOT NULL DEFAULT '',
  counted         INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  UNIQUE (bot_id, scope, key)
);
CREATE INDEX files_bot_created ON files(bot_id, created_at, id);
CREATE INDEX files_bot_updated ON files(bot_id, updated_at, id);
CREATE INDEX files_bot_key ON files(bot_id, key, id);
CREATE INDEX files_expires ON files(expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE file_tags (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  bot_id  TEXT NOT NULL,
  key     TEXT NOT NULL,
  value   TEXT NOT NULL,
  PRIMARY KEY (file_id, key)
);
CREATE INDEX file_tags_bot ON file_tags(bot_id, key, value);

CREATE TABLE workspace_storage (
  workspace_id     TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
  file_bytes       INTEGER NOT NULL DEFAULT 0,
  vector_bytes     INTEGER NOT NULL DEFAULT 0,
  max_file_bytes   INTEGER,
  max_storage      INTEGER,
  max_vector_bytes INTEGER
);

CREATE TABLE jobs (
  id          TEXT PRIMARY KEY,
  kind        TEXT NOT NULL,
  subject     TEXT NOT NULL,
  payload     TEXT NOT NULL,
  status      TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  run_after   INTEGER NOT NULL,
  lease_until INTEGER,
  created_at  INTEGER NOT NULL
);
CREATE INDEX jobs_ready ON jobs(kind, status, run_after);
CREATE INDEX jobs_subject ON jobs(subject);

CREATE TABLE secrets (
  name       TEXT PRIMARY KEY,
  value      BLOB NOT NULL,
  created_at INTEGER NOT NULL
);
