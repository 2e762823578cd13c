-- 003_op_calls.sql — each op's host call: when the issuing thread began the call that
-- handed the op over (cudaMemcpyAsync, the kernel launch) and when it returned, on the
-- rep's clock as start_us and end_us. A timeline then shows where the GPU waited for the
-- host (the first op of a rep starts only once its call returns). NULL where not known:
-- CUPTI timing, host work, and every row stored before this migration.
ALTER TABLE op_events ADD COLUMN call_start_us REAL;
ALTER TABLE op_events ADD COLUMN call_end_us REAL;
