-- The head of each subject's queue, its first unfinished job in (run_after,
-- id) order, is marked (head = 1) in the transaction that queues or finishes
-- a job of the subject. Claiming reads the marked heads only, so its cost
-- does not grow with the jobs waiting behind them (other bots' queues).
ALTER TABLE jobs ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
DROP INDEX jobs_order;
CREATE INDEX jobs_open ON jobs(kind, subject, run_after, id) WHERE status <> 'done';
UPDATE jobs SET head = 1 WHERE status <> 'done' AND NOT EXISTS (SELECT 1 FROM jobs o
  WHERE o.kind = jobs.kind AND o.subject = jobs.subject AND o.status <> 'done'
    AND (o.run_after < jobs.run_after OR (o.run_after = jobs.run_after AND o.id < jobs.id)));
CREATE INDEX jobs_heads ON jobs(kind, run_after, id) WHERE head = 1;
CREATE INDEX jobs_running ON jobs(kind, subject) WHERE status = 'running';
