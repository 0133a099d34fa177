-- A bot's passages counted as they are stored and deleted, so that the
-- search's check of its vector index (is it up to date?) reads one row
-- instead of counting the bot's passages. changes grows with every
-- statement that stores or deletes passages of the bot; max_seq is the
-- newest passage's seq. Statement triggers: one update per bot and
-- statement, not per passage.
CREATE TABLE passage_stats (
  bot_id   TEXT PRIMARY KEY,
  passages BIGINT NOT NULL,
  max_seq  BIGINT NOT NULL,
  changes  BIGINT NOT NULL
);
INSERT INTO passage_stats (bot_id, passages, max_seq, changes)
  SELECT bot_id, COUNT(*), MAX(seq), 0 FROM passages GROUP BY bot_id;
CREATE FUNCTION passage_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO passage_stats (bot_id, passages, max_seq, changes)
    SELECT bot_id, COUNT(*), MAX(seq), 1 FROM stored GROUP BY bot_id ORDER BY bot_id
    ON CONFLICT (bot_id) DO UPDATE SET passages = passage_stats.passages + excluded.passages,
      max_seq = GREATEST(passage_stats.max_seq, excluded.max_seq), changes = passage_stats.changes + 1;
  RETURN NULL;
END
$$;
CREATE FUNCTION passage_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE passage_stats s SET passages = s.passages - d.n, changes = s.changes + 1
    FROM (SELECT bot_id, COUNT(*) AS n FROM deleted GROUP BY bot_id) d WHERE s.bot_id = d.bot_id;
  RETURN NULL;
END
$$;
CREATE TRIGGER passage_stats_insert AFTER INSERT ON passages REFERENCING NEW TABLE AS stored
  FOR EACH STATEMENT EXECUTE FUNCTION passage_stats_insert();
CREATE TRIGGER passage_stats_delete AFTER DELETE ON passages REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION passage_stats_delete();
