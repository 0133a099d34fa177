-- With --ai-index-questions the model writes, for each passage, questions
-- it answers ("How do I cancel my membership?" for the steps to end one):
-- a third full-text field beside the content and the heading path, stored
-- as a JSON array of strings like the breadcrumb, weighed lowest by the
-- ranking (internal/indexing/rank). Passages indexed without it hold [].
ALTER TABLE passages ADD COLUMN questions TEXT NOT NULL DEFAULT '[]';
DROP TRIGGER passages_fts_insert;
DROP TRIGGER passages_fts_delete;
DROP TABLE passages_fts;
CREATE VIRTUAL TABLE passages_fts USING fts5(content, breadcrumb, questions, content='passages', content_rowid='seq', tokenize='porter unicode61');
INSERT INTO passages_fts(passages_fts) VALUES ('rebuild');
CREATE TRIGGER passages_fts_insert AFTER INSERT ON passages BEGIN
  INSERT INTO passages_fts(rowid, content, breadcrumb, questions) VALUES (new.seq, new.content, new.breadcrumb, new.questions);
END;
CREATE TRIGGER passages_fts_delete AFTER DELETE ON passages BEGIN
  INSERT INTO passages_fts(passages_fts, rowid, content, breadcrumb, questions) VALUES ('delete', old.seq, old.content, old.breadcrumb, old.questions);
END;
