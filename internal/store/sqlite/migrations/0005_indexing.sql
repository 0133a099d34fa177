-- Indexing: a file's passages, their vectors, and a full-text index over
-- their content. seq orders passages as they were stored (the search's
-- vector cache loads what is new since its last read).
CREATE TABLE passages (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  file_id    TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  bot_id     TEXT NOT NULL,
  position   INTEGER NOT NULL,
  content    TEXT NOT NULL,
  meta       TEXT NOT NULL,
  breadcrumb TEXT NOT NULL,
  vector     BLOB NOT NULL
);
CREATE INDEX passages_file ON passages(file_id, position);
CREATE INDEX passages_bot ON passages(bot_id, seq);

CREATE VIRTUAL TABLE passages_fts USING fts5(content, content='passages', content_rowid='seq', tokenize='porter unicode61');
CREATE TRIGGER passages_fts_insert AFTER INSERT ON passages BEGIN
  INSERT INTO passages_fts(rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER passages_fts_delete AFTER DELETE ON passages BEGIN
  INSERT INTO passages_fts(passages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
