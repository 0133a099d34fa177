-- Bot runtime: the state bot code keeps per bot, user and conversation, and
-- the order in which a subject's jobs run (oldest run_after first).
CREATE TABLE bot_states (
  bot_id     TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  scope      TEXT NOT NULL,
  scope_id   TEXT NOT NULL,
  value      TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (bot_id, scope, scope_id)
);
CREATE INDEX bot_states_scope ON bot_states(scope, scope_id);

CREATE INDEX jobs_order ON jobs(kind, subject, run_after, id);
