-- AI Spend: one row per metered model call (AI-assisted indexing), charged
-- to the workspace. A deleted bot's calls stay counted: the workspace spent
-- them.
CREATE TABLE ai_usage (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bot_id        TEXT NOT NULL,
  file_id       TEXT NOT NULL,
  purpose       TEXT NOT NULL,
  model         TEXT NOT NULL,
  input_tokens  INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost          INTEGER NOT NULL,
  created_at    INTEGER NOT NULL
);
CREATE INDEX ai_usage_workspace ON ai_usage(workspace_id, created_at);
