-- 001_init.sql — streamlab's first schema: machines, sweeps, experiments, results
-- (statistics per experiment and per repetition) and per-op events.
CREATE TABLE machines (
    id             TEXT PRIMARY KEY,
    hostname       TEXT NOT NULL,
    label          TEXT NOT NULL DEFAULT '',
    backend        TEXT NOT NULL,
    cpu            TEXT NOT NULL DEFAULT '',
    kernel         TEXT NOT NULL DEFAULT '',
    cuda_runtime   TEXT NOT NULL DEFAULT '',
    cuda_driver    TEXT NOT NULL DEFAULT '',
    driver_version TEXT NOT NULL DEFAULT '',
    info           TEXT NOT NULL,            -- the whole machine as JSON (GPUs, calibration)
    first_seen     TEXT NOT NULL,
    last_seen      TEXT NOT NULL
);

CREATE TABLE sweeps (
    id         TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    request    TEXT NOT NULL                 -- {"base": spec, "axes": {...}} as submitted
);

CREATE TABLE experiments (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT, -- local order: newest first, queue order
    id          TEXT NOT NULL UNIQUE,
    machine_id  TEXT NOT NULL REFERENCES machines(id),
    sweep_id    TEXT REFERENCES sweeps(id),
    sweep_index INTEGER,
    device      INTEGER NOT NULL DEFAULT 0,  -- the worker (first device) that runs it
    status      TEXT NOT NULL CHECK (status IN ('queued','running','done','failed','cancelled')),
    variant     TEXT NOT NULL,
    size        INTEGER NOT NULL,
    streams     INTEGER NOT NULL,
    label       TEXT NOT NULL DEFAULT '',
    spec        TEXT NOT NULL,               -- the full spec after defaults, JSON
    error       TEXT,
    created_at  TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT
);
CREATE INDEX experiments_status ON experiments(status, machine_id, device, seq);
CREATE INDEX experiments_sweep ON experiments(sweep_id, sweep_index);

CREATE TABLE results (
    experiment_id    TEXT PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
    backend          TEXT NOT NULL,
    reps             INTEGER NOT NULL,
    median_rep       INTEGER NOT NULL,
    total_median_ms  REAL NOT NULL,
    total_min_ms     REAL NOT NULL,
    total_max_ms     REAL NOT NULL,
    total_mean_ms    REAL NOT NULL,
    total_stddev_ms  REAL NOT NULL,
    h2d_ms           REAL NOT NULL,
    kernel_ms        REAL NOT NULL,
    d2h_ms           REAL NOT NULL,
    host_ms          REAL NOT NULL,
    h2d_gbps         REAL NOT NULL,
    d2h_gbps         REAL NOT NULL,
    overlap          REAL NOT NULL,
    floor_ms         REAL,
    efficiency       REAL,
    predicted_ms     REAL,
    prediction_error REAL,
    verified         INTEGER NOT NULL,
    verification     TEXT NOT NULL,
    extra            TEXT                    -- backend facts (conditions, choices), JSON
);

CREATE TABLE result_reps (
    experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    rep           INTEGER NOT NULL,
    total_ms      REAL NOT NULL,
    PRIMARY KEY (experiment_id, rep)
);

CREATE TABLE op_events (
    experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    rep           INTEGER NOT NULL,
    device        INTEGER NOT NULL,
    stream        INTEGER NOT NULL,
    chunk         INTEGER NOT NULL,
    op            TEXT NOT NULL CHECK (op IN ('h2d','kernel','d2h','host')),
    start_us      REAL NOT NULL,
    end_us        REAL NOT NULL,
    bytes         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX op_events_experiment ON op_events(experiment_id, rep);
