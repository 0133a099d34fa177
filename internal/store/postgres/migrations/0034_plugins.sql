-- Plugins (docs/plugins.md): one row per version, with the columns of
-- integrations; code holds {"node": …, "browser": …}, the bundles a bot
-- project that adds the plugin builds into its own code.
CREATE TABLE plugins (
  id           TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  version      TEXT NOT NULL,
  dev          BOOLEAN NOT NULL,
  visibility   TEXT NOT NULL,
  created_by   TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL,
  -- Large columns last: listings read the columns before them.
  spec         TEXT NOT NULL,
  code         TEXT NOT NULL
);
CREATE UNIQUE INDEX plugins_name_version ON plugins(name, version) WHERE NOT dev;
CREATE INDEX plugins_ws ON plugins(workspace_id, name, created_at);
CREATE INDEX plugins_visibility ON plugins(visibility, name);

-- The plugins a bot installed, by alias: the version, its configuration,
-- and the integrations backing its interfaces and integrations (JSON).
CREATE TABLE bot_plugins (
  bot_id        TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  alias         TEXT NOT NULL,
  plugin_id     TEXT NOT NULL,
  name          TEXT NOT NULL,
  version       TEXT NOT NULL,
  enabled       BOOLEAN NOT NULL,
  configuration TEXT NOT NULL,
  interfaces    TEXT NOT NULL,
  integrations  TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  PRIMARY KEY (bot_id, alias)
);
CREATE INDEX bot_plugins_plugin ON bot_plugins(plugin_id);
