-- Full-text search sees each passage's heading path (its document's title
-- and enclosing headings, the breadcrumb, a JSON array of strings whose
-- punctuation the parser skips) beside its content: the content's lexemes
-- carry weight A, the headings' weight B; the ranking (internal/indexing/rank)
-- weighs the two fields.
DROP INDEX passages_tsv;
ALTER TABLE passages DROP COLUMN tsv;
ALTER TABLE passages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', breadcrumb), 'B')
) STORED;
CREATE INDEX passages_tsv ON passages USING GIN (tsv);
