"""--worker-cpu N (STREAMLAB_WORKER_CPU): the GPU worker issues from CPU N, the one thread of the
process there; the main, HTTP and push threads run on the other CPUs. A pinned benchmark puts its
plain CUDA program on N too (bench/lab.py): pinning the whole server there had its HTTP threads
share the worker's CPU, 2-4% on 2^22 x8-x32 on the lent H100 (2026-11-26). Bad values exit 2
with a message and serve nothing."""
import json
import os

from conftest import Server, check, run_cli, small


def threads(pid):
    """{thread name: [Cpus_allowed_list of each thread so named]} of process pid."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                cpus = next(line.split(":", 1)[1].strip() for line in f if line.startswith("Cpus_allowed_list"))
        except (OSError, StopIteration):
            continue  # a thread that ended meanwhile
        out.setdefault(name, []).append(cpus)
    return out


def cpu_list(cpus):
    """A set of CPUs as the kernel writes a Cpus_allowed_list ("0-3,5")."""
    out, run = [], []
    for c in sorted(cpus):
        if run and c != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(c)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def test_the_worker_alone_is_pinned_and_runs(make_server):
    cpu = max(os.sched_getaffinity(0))
    srv = make_server(extra=("--worker-cpu", str(cpu)))
    t = threads(srv.proc.pid)
    check(t.get("sl-worker0") == [str(cpu)], f"one thread sl-worker0 pinned to CPU {cpu}", t, "the server's threads")
    mine = os.sched_getaffinity(0)
    rest = cpu_list(mine - {cpu}) if len(mine) > 1 else cpu_list(mine)
    others = {name: cpus for name, cpus in t.items() if name != "sl-worker0"}
    check(others and all(c == rest for cpus in others.values() for c in cpus),
          f"every other thread on the other CPUs ({rest})", others, "the server's threads")
    eid = srv.post("/api/experiments", small()).json()["id"]
    e = srv.wait_done(eid)
    check(e["status"] == "done", "done", e["status"], "an experiment on the pinned worker")


def test_the_environment_pins_the_worker_too(make_server, monkeypatch):
    cpu = min(os.sched_getaffinity(0))
    monkeypatch.setenv("STREAMLAB_WORKER_CPU", str(cpu))
    srv = make_server()
    t = threads(srv.proc.pid)
    check(t.get("sl-worker0") == [str(cpu)], f"sl-worker0 pinned to CPU {cpu}", t, "STREAMLAB_WORKER_CPU")


def test_run_issues_from_the_cpu_too(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(small()))
    cpu = max(os.sched_getaffinity(0))
    code, out, err = run_cli(["run", str(spec), "--backend", "sim", "--worker-cpu", str(cpu)])
    check(code == 0, "exit 0", code, f"streamlab run --worker-cpu\n  stderr: {err[-1500:]}")
    check(json.loads(out)["status"] == "done" and "worker-cpu" not in err, "done, no complaint",
          (json.loads(out)["status"], err[-500:]), "streamlab run --worker-cpu")


def test_bad_values_exit_2_and_serve_nothing(tmp_path):
    outside = next(c for c in range(1023, -1, -1) if c not in os.sched_getaffinity(0))
    for value, says in (("-1", "integer from 0"), ("x", "integer from 0"), ("1024", "integer from 0"),
                        (str(outside), "not a CPU this process may run on")):
        srv = Server(tmp_path, name=f"bad{value}", extra=("--worker-cpu", value))
        argv = ["serve", "--listen", "127.0.0.1:1", "--db", srv.db, "--web", srv.web, "--backend", "sim"] + srv.opts
        code, out, err = run_cli(argv, timeout=30)
        check(code == 2 and says in err, f"exit 2 saying {says!r}", (code, err[-400:]), f"--worker-cpu {value}")
        check(not os.path.exists(srv.db), "no store created", srv.db, f"--worker-cpu {value}")


def test_the_pinned_workers_openmp_work_runs_on_every_cpu(make_server):
    """The worker is pinned, but the OpenMP team it makes for the host's work (the cpu variant, host_overlap's
    share) is not: libgomp starts its threads with their maker's CPUs, so a pinned worker's team shared its one
    CPU (a lent H100's calibration, pinned, read the host's rate 100 times slow)."""
    mine = os.sched_getaffinity(0)
    cpu = max(mine)
    srv = make_server(extra=("--worker-cpu", str(cpu)))
    eid = srv.post("/api/experiments", {"variant": "cpu", "size": 65536, "reps": 2}).json()["id"]
    e = srv.wait_done(eid)
    check(e["status"] == "done", "done", e["status"], "the cpu variant on the pinned worker")
    extra = e["result"]["extra"]
    check(extra.get("cpus") == len(mine), f"its threads on all {len(mine)} CPUs", extra, "result.extra")
    t = threads(srv.proc.pid)
    check(str(cpu) in t.get("sl-worker0", []), f"the worker still pinned to CPU {cpu}", t, "the server's threads")
