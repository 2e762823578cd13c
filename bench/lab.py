"""lab.py — the bench scripts' client of a streamlab server they started (stdlib only)."""
import contextlib
import json
import socket
import statistics
import time
import urllib.request


class Lab:
    def __init__(self, port, timeout=600):
        self.base, self.timeout = f"http://127.0.0.1:{port}", timeout

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.base + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=self.timeout) as r:
            return json.load(r)

    def finished(self, exp_id, what, poll_s=0.05):
        """GET the experiment until it has finished: the done experiment, or SystemExit
        naming `what` with its error."""
        while True:
            e = self.call("GET", f"/api/experiments/{exp_id}")
            if e["status"] in ("done", "failed", "cancelled"):
                break
            time.sleep(poll_s)
        if e["status"] != "done":
            raise SystemExit(f"{what}: {e.get('error') or e['status']}")
        return e

    def import_machine(self, machine):
        """POST /api/import a bundle of one machine (GET /api/machines/{id}'s form, or a
        profile's "machine"), so that experiments may name it in sim_of."""
        return self.call("POST", "/api/import", {"format": "streamlab-bundle", "version": 1, "machines": [machine],
                                                 "sweeps": [], "experiments": [], "timelines": {}})

    def wait_health(self, label, deadline_s=120):
        """GET /api/health until it answers (the server is starting): its answer. The
        server was started with --machine-label label: another answering on the port
        (it was taken after all) is an error, not a server to measure with."""
        deadline = time.time() + deadline_s
        while True:
            try:
                health = self.call("GET", "/api/health")
                break
            except Exception:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        ours = [m for m in self.call("GET", "/api/machines")["items"] if m["id"] == health.get("machine_id")]
        if not ours or ours[0].get("label") != label:
            raise SystemExit(f"{self.base}: another server answers there, not the one started with label {label}")
        return health


# the seeds' 38 points: (variant, log2 size, streams) at 2^22 and 2^25, sequential and
# async_v1/v2 over 1..256 streams
SEED_POINTS = [(v, lg, s) for lg in (22, 25) for v, ss in (("sequential", [1]), ("async_v1", [1 << i for i in range(9)]),
                                                           ("async_v2", [1 << i for i in range(9)])) for s in ss]


def seed_points(sizes="22,25"):
    """SEED_POINTS at the log2 sizes of a comma list ("25", "22,25")."""
    want = {int(x) for x in sizes.split(",") if x.strip()}
    return [p for p in SEED_POINTS if p[1] in want]


VARIANT_SHORT = {"seq": "sequential", "v1": "async_v1", "v2": "async_v2"}


def parse_points(text, who):
    """A comma list of VARIANT:LOG2SIZE:STREAMS (seq|v1|v2, 10-30, 1 or more), e.g. "v1:22:8,seq:25:1",
    as (variant, log2 size, streams) tuples; SystemExit naming `who` on a bad one."""
    out = []
    for p in text.split(","):
        parts = p.split(":")
        if (len(parts) != 3 or parts[0] not in VARIANT_SHORT or not parts[1].isdigit() or not parts[2].isdigit()
                or not 10 <= int(parts[1]) <= 30 or int(parts[2]) < 1):
            raise SystemExit(f"{who}: bad point {p!r} (seq|v1|v2:LOG2SIZE 10-30:STREAMS 1 or more)")
        out.append((VARIANT_SHORT[parts[0]], int(parts[1]), int(parts[2])))
    return out


def ref_median_ms(answer, what):
    """bench/ref_overlap's answer line ("ok MEDIAN_MS MIN_MS MAX_MS ISSUE_US GAP_US" or "err
    MESSAGE"): the median ms, or SystemExit naming `what` with the answer."""
    words = answer.split()
    if not words or words[0] != "ok":
        raise SystemExit(f"reference {what}: {' '.join(words)}")
    return float(words[1])


# bench/ref_overlap --serve's name for each variant it runs
REF_NAME = {"sequential": "seq", "async_v1": "v1", "async_v2": "v2"}


def ask_ref_answer(ref, p, reps):
    """One run of point p (variant, log2 size, streams) by a reference process (--serve),
    reps reps after 3 warm-ups: {"ms": its median, "least_ms": its least, "issue_us": the
    median host time issuing a rep, "between_us": the median host time between reps}, each
    None where the answer does not say it (ISSUE_US and GAP_US)."""
    v, lg, s = p
    ref.stdin.write(f"{REF_NAME[v]} {1 << lg} {s} {reps} 3\n")
    ref.stdin.flush()
    answer = ref.stdout.readline()
    words = answer.split()
    return {"ms": ref_median_ms(answer, p), "least_ms": float(words[2]) if len(words) > 2 else None,
            "issue_us": float(words[4]) if len(words) > 4 else None,
            "between_us": float(words[5]) if len(words) > 5 else None}


def host_times(result):
    """A streamlab result's host times, as ask_ref_answer gives the reference's: {"issue_us":
    extra.timing.issue_us_clean, "between_us": extra.timing.between_reps.median_us, "check_us":
    ...check_median_us}, each None where the run does not say it (the sim: no wait between reps)."""
    timing = (result.get("extra") or {}).get("timing") or {}
    between = timing.get("between_reps") or {}
    return {"issue_us": timing.get("issue_us_clean"), "between_us": between.get("median_us"),
            "check_us": between.get("check_median_us")}


def ask_ref(ref, p, reps):
    """ask_ref_answer's median ms."""
    return ask_ref_answer(ref, p, reps)["ms"]


def settle(ref, max_s):
    """The machine settled by a reference process (bench/ref_overlap --serve, its `settle`):
    the host-bound points run until they are steady, or max_s pass. (seconds, steady, the
    first and last 5 s windows' 2^22 v1 x128 ms); 0 max_s: (0, False, 0, 0), nothing run."""
    if max_s <= 0:
        return 0.0, False, 0.0, 0.0
    ref.stdin.write(f"settle {max_s}\n")
    ref.stdin.flush()
    words = ref.stdout.readline().split()
    if len(words) != 5 or words[0] != "ok":
        raise SystemExit(f"reference settle: {' '.join(words)}")
    return float(words[1]), words[2] == "1", float(words[3]), float(words[4])


def pin_to(cpu):
    """A preexec_fn that pins the child, and so every thread it starts, to CPU `cpu`; None
    for None (unpinned)."""
    import os
    return None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))


def start_server(binary, name, out_dir, label=None, cpu=None, env=None):
    """`binary serve` on a free port with a fresh store in a temporary folder, labelled
    LABEL (default bench-NAME-PID), its output into OUT_DIR/NAME-server.log: (process, Lab,
    label); its GPU worker (and calibration) on CPU `cpu` where given (--worker-cpu), its
    other threads anywhere: pinning the whole process there had its HTTP threads share the
    worker's CPU, 2-4% slower than the reference at 2^22 x8-x32 (lent H100, 2026-11-26).
    The caller waits with lab.wait_health(label) and stops the process (`served` does both
    ends for a with-block). env: variables added to this process's environment for the server's."""
    import os
    import subprocess
    import tempfile
    port, label = free_port(), label or f"bench-{name}-{os.getpid()}"
    tmp = tempfile.mkdtemp(prefix=f"{name}.")
    os.makedirs(out_dir, exist_ok=True)
    log = open(os.path.join(out_dir, f"{name}-server.log"), "w")
    pin = [] if cpu is None else ["--worker-cpu", str(cpu)]
    try:
        srv = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", "--db",
                                os.path.join(tmp, f"{name}.db"), "--machine-label", label] + pin,
                               stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, **(env or {})))
    finally:
        log.close()  # the child has its own copy
    return srv, Lab(port), label


@contextlib.contextmanager
def served(binary, name, out_dir, label=None, cpu=None, env=None):
    """start_server's server for a with-block: yields (process, Lab, its /api/health answer)
    once it answers as LABEL; on leaving the block, however it is left, the server is
    stopped (SIGTERM, SIGKILL after 30 s) and waited for."""
    import subprocess
    srv, lab, label = start_server(binary, name, out_dir, label, cpu, env)
    try:
        yield srv, lab, lab.wait_health(label)
    finally:
        srv.terminate()
        try:
            srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()


def _nvidia_smi_list():
    """`nvidia-smi -L`: (exit code, its output); (None, "") where there is no nvidia-smi."""
    import subprocess
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    except OSError:
        return None, ""
    return p.returncode, p.stdout


def has_gpu():
    """Whether nvidia-smi sees a GPU here (no nvidia-smi: no)."""
    return _nvidia_smi_list()[0] == 0


def gpu_count():
    """How many GPUs nvidia-smi lists here (no nvidia-smi: 0)."""
    return sum(1 for line in _nvidia_smi_list()[1].splitlines() if line.startswith("GPU "))


def free_port():
    """A port nothing listens on now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def trace_reps(path, reps, gap_ns=1_000_000):
    """bench/trace_acts.c's records of copies and kernels grouped into reps (apart by gap_ns), the
    last `reps` of the usual op count; each op (start ns, end ns, kind H|D|K|O, stream, channel)"""
    ops = []
    with open(path) as f:
        for line in f:
            kind, stream, start, end, _, channel = line.split()[:6]
            if kind != "A":
                ops.append((int(start), int(end), kind, int(stream), int(channel)))
    ops.sort()
    groups, end = [], None
    for o in ops:
        if end is None or o[0] - end > gap_ns:
            groups.append([])
        groups[-1].append(o)
        end = o[1] if end is None else max(end, o[1])
    usual = statistics.median_low([len(g) for g in groups]) if groups else 0
    return [g for g in groups if len(g) == usual][-reps:]


if __name__ == "__main__":  # `python3 bench/lab.py`: a free port, for the shell scripts
    print(free_port())
