-- Full-text search sees each passage's heading path (its document's title
-- and enclosing headings, the breadcrumb) as a second field beside its
-- content: a passage under "Returns > Sale items" matches "sale returns"
-- even when its own text says neither. The breadcrumb is stored as a JSON
-- array of strings; the tokenizer splits on its punctuation, so the field
-- holds the headings' words. The ranking (internal/indexing/rank) weighs it.
DROP TRIGGER passages_fts_insert;
DROP TRIGGER passages_fts_delete;
DROP TABLE passages_fts;
CREATE VIRTUAL TABLE passages_fts USING fts5(content, breadcrumb, content='passages', content_rowid='seq', tokenize='porter unicode61');
INSERT INTO passages_fts(passages_fts) VALUES ('rebuild');
CREATE TRIGGER passages_fts_insert AFTER INSERT ON passages BEGIN
  INSERT INTO passages_fts(rowid, content, breadcrumb) VALUES (new.seq, new.content, new.breadcrumb);
END;
CREATE TRIGGER passages_fts_delete AFTER DELETE ON passages BEGIN
  INSERT INTO passages_fts(passages_fts, rowid, content, breadcrumb) VALUES ('delete', old.seq, old.content, old.breadcrumb);
END;
