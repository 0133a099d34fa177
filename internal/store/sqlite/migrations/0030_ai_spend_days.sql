-- AI Spend by workspace, bot and day (UTC; days counted from the epoch),
-- kept by triggers as metered calls are recorded, so that the spending
-- check before each model call reads a month's days instead of summing
-- every call of the month.
CREATE TABLE ai_spend_days (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bot_id       TEXT NOT NULL,
  day          INTEGER NOT NULL,
  cost         INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, day, bot_id)
);
INSERT INTO ai_spend_days (workspace_id, bot_id, day, cost)
  SELECT workspace_id, bot_id, created_at / 86400000000, SUM(cost) FROM ai_usage WHERE failed = 0
  GROUP BY workspace_id, bot_id, created_at / 86400000000;
CREATE TRIGGER ai_spend_days_insert AFTER INSERT ON ai_usage WHEN NEW.failed = 0 BEGIN
  INSERT INTO ai_spend_days (workspace_id, bot_id, day, cost) VALUES (NEW.workspace_id, NEW.bot_id, NEW.created_at / 86400000000, NEW.cost)
    ON CONFLICT (workspace_id, day, bot_id) DO UPDATE SET cost = cost + excluded.cost;
END;
CREATE TRIGGER ai_spend_days_delete AFTER DELETE ON ai_usage WHEN OLD.failed = 0 BEGIN
  UPDATE ai_spend_days SET cost = cost - OLD.cost WHERE workspace_id = OLD.workspace_id AND day = OLD.created_at / 86400000000 AND bot_id = OLD.bot_id;
END;
