"""bench/replay_model.sh: the predictions recorded in a database, replayed through a fresh
server's POST /api/predict with what each used (basis trace, host costs, device, kernel
time per element). On the sim's own runs every replay gives the recorded prediction; an
override that changes the device changes them; bad arguments fail with a message."""

import os
import re
import subprocess

import pytest

from conftest import BIN, Server, check

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "replay_model.sh")
SUMMARY = re.compile(r"^replay-model: (\d+) predictions, (\d+) replayed as recorded; "
                     r"model median error ([\d.]+)%, max ([\d.]+)%$")


def replay(db, *extra):
    p = subprocess.run(["sh", SCRIPT, BIN, str(db), *extra], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def summary(out):
    last = out.strip().splitlines()[-1] if out.strip() else ""
    m = SUMMARY.match(last)
    check(m is not None, "a last line 'replay-model: N predictions, K replayed as recorded; ...'", last,
          "replay_model.sh output")
    return int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A stopped sim server's database holding a swept set of predicted runs."""
    srv = Server(tmp_path_factory.mktemp("replay"), name="replay")
    srv.start()
    base = {"size": 1 << 20, "reps": 3, "warmup": 1, "backend": "sim", "predict": True}
    ids = [srv.create(dict(base, variant=v, streams=n))["id"] for v in ("async_v1", "async_v2") for n in (2, 4, 8)]
    for eid in ids:
        srv.wait_done(eid)
    srv.stop()
    return srv.db, len(ids)


def test_every_recorded_prediction_replays_as_recorded(recorded):
    db, n = recorded
    rc, out, err = replay(db)
    check(rc == 0, "exit 0", rc, f"replay_model.sh {db}\n  stderr: {err[-600:]}")
    got, same, median, worst = summary(out)
    check((got, same) == (n, n), f"{n} predictions, all {n} as recorded", (got, same), "replay of the sim's runs")
    check(worst <= 1e-6, "0% error: the sim's basis predicts the sim", worst, "replayed model error")


def test_a_databases_predictions_kept_as_json_replay_the_same(recorded, tmp_path):
    """REPLAY_EXPORT writes the database's predictions to a JSON file (bench/data/model keeps the
    lent GPUs' so); replaying that file gives what replaying the database gives."""
    db, n = recorded
    kept = tmp_path / "predictions.json"
    p = subprocess.run(["sh", SCRIPT, BIN, str(db)], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, REPLAY_EXPORT=str(kept)))
    check(p.returncode == 0 and kept.exists(), "exit 0 and the file written", (p.returncode, kept.exists()),
          f"REPLAY_EXPORT\n  stderr: {p.stderr[-600:]}")
    rc, out, err = replay(kept)
    check(rc == 0, "exit 0", rc, f"replay_model.sh {kept}\n  stderr: {err[-600:]}")
    rc2, out2, _ = replay(db)
    check(summary(out) == summary(out2) and summary(out)[:2] == (n, n), summary(out2), summary(out),
          "the file's replay against the database's")


def test_an_override_changes_the_replays(recorded):
    db, n = recorded
    rc, out, err = replay(db, '{"device": {"copy_engines": 1}}')
    check(rc == 0, "exit 0", rc, f"replay with one copy engine\n  stderr: {err[-600:]}")
    got, same, median, worst = summary(out)
    check(got == n and same < n, f"{n} predictions, fewer than {n} as recorded", (got, same),
          "one copy engine instead of the sim's two")
    check(worst > 0, "> 0%: the runs had two copy engines", worst, "replayed model error")


@pytest.mark.parametrize("args,message", [
    (("/nonexistent/streamlab.db",), "no database"),
    (("{db}", "[1]"), "must be a JSON object"),
])
def test_bad_arguments_fail_with_a_message(recorded, args, message):
    db, _ = recorded
    args = [a.format(db=db) for a in args]
    rc, out, err = replay(*args)
    check(rc != 0 and message in err, f"a non-zero exit saying {message!r}", (rc, err[-300:]),
          f"replay_model.sh {' '.join(args)}")
