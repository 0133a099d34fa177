-- A bot's passages counted as they are stored and deleted, so that the
-- search's check of its vector index (is it up to date?) reads one row
-- instead of counting the bot's passages. changes grows with every
-- passage stored or deleted; max_seq is the newest passage's seq.
CREATE TABLE passage_stats (
  bot_id   TEXT PRIMARY KEY,
  passages INTEGER NOT NULL,
  max_seq  INTEGER NOT NULL,
  changes  INTEGER NOT NULL
);
INSERT INTO passage_stats (bot_id, passages, max_seq, changes)
  SELECT bot_id, COUNT(*), MAX(seq), 0 FROM passages GROUP BY bot_id;
CREATE TRIGGER passage_stats_insert AFTER INSERT ON passages BEGIN
  INSERT INTO passage_stats (bot_id, passages, max_seq, changes) VALUES (NEW.bot_id, 1, NEW.seq, 1)
    ON CONFLICT (bot_id) DO UPDATE SET passages = passages + 1, max_seq = MAX(max_seq, excluded.max_seq), changes = changes + 1;
END;
CREATE TRIGGER passage_stats_delete AFTER DELETE ON passages BEGIN
  UPDATE passage_stats SET passages = passages - 1, changes = changes + 1 WHERE bot_id = OLD.bot_id;
END;
