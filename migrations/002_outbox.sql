-- 002_outbox.sql — the push outbox (`--push URL`): finished experiments waiting to be
-- delivered to a central streamlab. An entry stays until the central server accepts its
-- bundle (2xx), so a result is never lost while that server is unreachable.
CREATE TABLE outbox (
    experiment_id   TEXT PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,                    -- ISO time; NULL: given up (a 4xx other than 409/429)
    last_error      TEXT,
    enqueued_at     TEXT NOT NULL
);
CREATE INDEX outbox_due ON outbox(next_attempt_at);
