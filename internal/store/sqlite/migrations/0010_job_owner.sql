-- The bot whose code scheduled a job (scheduled events): a bot's pending
-- scheduled events are capped, and counting them reads only its own.
ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_owner ON jobs(owner, kind, status) WHERE owner <> '';
