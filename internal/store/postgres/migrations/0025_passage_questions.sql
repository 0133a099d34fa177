-- With --ai-index-questions the model writes, for each passage, questions
-- it answers: a third full-text field (a JSON array of strings, like the
-- breadcrumb), its lexemes at weight C below the content (A) and the
-- heading path (B); the ranking (internal/indexing/rank) weighs the fields.
-- Passages indexed without it hold [].
ALTER TABLE passages ADD COLUMN questions TEXT NOT NULL DEFAULT '[]';
DROP INDEX passages_tsv;
ALTER TABLE passages DROP COLUMN tsv;
ALTER TABLE passages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', breadcrumb), 'B')
  || setweight(to_tsvector('english', questions), 'C')
) STORED;
CREATE INDEX passages_tsv ON passages USING GIN (tsv);
