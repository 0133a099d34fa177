-- Indexing: a file's passages, their vectors, and a full-text index over
-- their content. seq orders passages as they were stored (the search's
-- vector cache loads what is new since its last read).
CREATE TABLE passages (
  seq        BIGSERIAL PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  file_id    TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  bot_id     TEXT NOT NULL,
  position   BIGINT NOT NULL,
  content    TEXT NOT NULL,
  meta       TEXT NOT NULL,
  breadcrumb TEXT NOT NULL,
  vector     BYTEA NOT NULL,
  tsv        tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
);
CREATE INDEX passages_file ON passages(file_id, position);
CREATE INDEX passages_bot ON passages(bot_id, seq);
CREATE INDEX passages_tsv ON passages USING GIN (tsv);
