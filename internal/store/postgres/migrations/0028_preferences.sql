-- Preferences (set/getAccountPreference, set/getWorkspacePreference): a key
-- and a JSON value, owned by exactly one account or one workspace, deleted
-- with it. The value is JSON text, "null" included.
CREATE TABLE preferences (
  account_id   TEXT REFERENCES accounts(id) ON DELETE CASCADE,
  workspace_id TEXT REFERENCES workspaces(id) ON DELETE CASCADE,
  key          TEXT NOT NULL,
  value        TEXT NOT NULL,
  updated_at   BIGINT NOT NULL,
  CHECK ((account_id IS NULL) <> (workspace_id IS NULL))
);
CREATE UNIQUE INDEX preferences_account ON preferences(account_id, key);
CREATE UNIQUE INDEX preferences_workspace ON preferences(workspace_id, key);
