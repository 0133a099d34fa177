-- Runtime API events: what a bot created with createEvent, delivered to its
-- own handlers by the job job_id (kept once done), and how that went.
-- conversation_id and user_id are internal ids.
CREATE TABLE bot_events (
  id              TEXT PRIMARY KEY,
  bot_id          TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  type            TEXT NOT NULL,
  payload         TEXT NOT NULL,
  conversation_id TEXT NOT NULL DEFAULT '',
  user_id         TEXT NOT NULL DEFAULT '',
  message_id      TEXT NOT NULL DEFAULT '',
  workflow_id     TEXT NOT NULL DEFAULT '',
  job_id          TEXT NOT NULL,
  status          TEXT NOT NULL,
  failure_reason  TEXT NOT NULL DEFAULT '',
  run_at          INTEGER NOT NULL,
  created_at      INTEGER NOT NULL
);
CREATE INDEX bot_events_bot ON bot_events(bot_id, created_at, id);
CREATE INDEX bot_events_job ON bot_events(job_id);
CREATE INDEX bot_events_conversation ON bot_events(conversation_id) WHERE conversation_id <> '';
CREATE INDEX bot_events_user ON bot_events(user_id) WHERE user_id <> '';
