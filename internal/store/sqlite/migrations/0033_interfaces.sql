-- Interfaces (docs/integrations.md#interfaces): what integrations implement (an llm, a hitl…), one
-- row per version, with the columns of integrations (an interface has no code).
CREATE TABLE interfaces (
  id           TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  version      TEXT NOT NULL,
  dev          INTEGER NOT NULL,
  visibility   TEXT NOT NULL,
  created_by   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  -- Large columns last: listings read the columns before them.
  spec         TEXT NOT NULL,
  code         TEXT NOT NULL
);
CREATE UNIQUE INDEX interfaces_name_version ON interfaces(name, version) WHERE dev = 0;
CREATE INDEX interfaces_ws ON interfaces(workspace_id, name, created_at);
CREATE INDEX interfaces_visibility ON interfaces(visibility, name);
