-- The audit log: who did what to a workspace (getAuditRecords). No foreign
-- key to workspaces: the record of a workspace's closing outlives it, until
-- the retention (--audit-retention) prunes it. Empty text is "none".
CREATE TABLE audit_records (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL,
  recorded_at   BIGINT NOT NULL,
  user_id       TEXT NOT NULL DEFAULT '',
  user_email    TEXT NOT NULL DEFAULT '',
  action        TEXT NOT NULL,
  resource_id   TEXT NOT NULL DEFAULT '',
  resource_name TEXT NOT NULL DEFAULT '',
  value         TEXT NOT NULL DEFAULT ''
);
-- A workspace's records newest first, and pruning by age.
CREATE INDEX audit_records_workspace ON audit_records(workspace_id, recorded_at, id);
CREATE INDEX audit_records_recorded ON audit_records(recorded_at);
