-- AI Spend by workspace, bot and day (UTC; days counted from the epoch),
-- kept by a trigger as metered calls are recorded, so that the spending
-- check before each model call reads a month's days instead of summing
-- every call of the month.
CREATE TABLE ai_spend_days (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bot_id       TEXT NOT NULL,
  day          BIGINT NOT NULL,
  cost         BIGINT NOT NULL,
  PRIMARY KEY (workspace_id, day, bot_id)
);
INSERT INTO ai_spend_days (workspace_id, bot_id, day, cost)
  SELECT workspace_id, bot_id, created_at / 86400000000, SUM(cost) FROM ai_usage WHERE failed = 0
  GROUP BY workspace_id, bot_id, created_at / 86400000000;
CREATE FUNCTION ai_spend_days() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.failed = 0 THEN
      INSERT INTO ai_spend_days (workspace_id, bot_id, day, cost) VALUES (NEW.workspace_id, NEW.bot_id, NEW.created_at / 86400000000, NEW.cost)
        ON CONFLICT (workspace_id, day, bot_id) DO UPDATE SET cost = ai_spend_days.cost + excluded.cost;
    END IF;
  ELSIF OLD.failed = 0 THEN
    UPDATE ai_spend_days SET cost = cost - OLD.cost WHERE workspace_id = OLD.workspace_id AND day = OLD.created_at / 86400000000 AND bot_id = OLD.bot_id;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER ai_spend_days AFTER INSERT OR DELETE ON ai_usage FOR EACH ROW EXECUTE FUNCTION ai_spend_days();
