-- Bot analytics: the counts bots track (trackAnalytics), per UTC day
-- (day = micros / 86,400,000,000), and how long each metered model call
-- took and whether it failed (a failed call costs nothing).
CREATE TABLE bot_analytics (
  bot_id TEXT NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  day    BIGINT NOT NULL,
  name   TEXT NOT NULL,
  count  BIGINT NOT NULL,
  PRIMARY KEY (bot_id, day, name)
);
ALTER TABLE ai_usage ADD COLUMN latency_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ai_usage ADD COLUMN failed BIGINT NOT NULL DEFAULT 0;
CREATE INDEX ai_usage_bot ON ai_usage(bot_id, created_at);
CREATE INDEX chat_events_conversation ON chat_events(conversation_id, created_at);
