-- Integrations that workspaces deploy (`bp deploy` of an integration): one
-- row per version. A production version's name and version are unique
-- across the server (the hub resolves name@version to one integration); dev
-- integrations (`bp dev`) are the developer's own and may repeat.
CREATE TABLE integrations (
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
CREATE UNIQUE INDEX integrations_name_version ON integrations(name, version) WHERE dev = 0;
CREATE INDEX integrations_ws ON integrations(workspace_id, name, created_at);
CREATE INDEX integrations_visibility ON integrations(visibility, name);
