"""channel_rules.py — issue 18: which hardware channel did the driver give each copy and kernel, and
which rule says so? Reads bench/trace_acts.c's records taken with the runtime calls (TRACE_ACTS_API=1;
gzip or plain), e.g. from
  CUDA_INJECTION64_PATH=build/bench/libtrace_acts.so TRACE_ACTS_OUT=t.txt TRACE_ACTS_API=1 \
      build/bench/probe_modes v1 33554432 128 40 1 keep
For each kind of op (H2D, D2H, kernel), in issue order, it holds each op's channel against three rules,
each judged at the return of the op's call:
  turn        the channel of its pool used least recently (the pool's channels in turn);
  idle-first  a channel whose last op has ended if there is one (several: the least recently used of
              them), else the least recently used: the model's rule for copies and kernels
              (gpu/model.c launch_channel; kernels there take the idle one whose last kernel ended
              longest ago);
and counts, where an idle channel existed, whether the op went to one; and every op that broke its
pool's turn, by the state of the channel it took. A probe: it prints, it asserts nothing. Records of
the lent H100 GPU-bdb97acb (2026-11-27) are in bench/data/probes (GPU-bdb97acb-acts-api-*).

usage: channel_rules.py TRACE [--kinds HDK]"""
import argparse
import collections
import gzip
import sys

NAMES = {"H": "H2D", "D": "D2H", "K": "kernel"}


def read(path):
    """(ops, call end by correlation id): ops as dicts of kind, stream, start, end, channel, corr."""
    ops, calls = [], {}
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            w = line.split()
            if len(w) < 7:
                continue
            if w[0] == "A":
                calls[int(w[6])] = int(w[3])
            elif w[0] in NAMES:
                ops.append({"kind": w[0], "stream": int(w[1]), "start": int(w[2]), "end": int(w[3]),
                            "chan": int(w[5]), "corr": int(w[6])})
    return ops, calls


def judge(ops, calls, kind):
    """The counts for one kind of op, in issue (correlation) order."""
    mine = sorted((o for o in ops if o["kind"] == kind), key=lambda o: o["corr"])
    chans = sorted({o["chan"] for o in mine})
    last = {c: None for c in chans}
    used = {c: -1 for c in chans}
    n = turn = rule = with_idle = to_idle = 0
    broke = collections.Counter()
    for i, o in enumerate(mine):
        t = calls.get(o["corr"], o["start"])
        lru = min(chans, key=lambda c: used[c])
        idle = [c for c in chans if last[c] is not None and last[c]["end"] <= t]
        pick = min(idle, key=lambda c: used[c]) if idle else lru
        if i >= len(chans):  # each channel used once: the turn is known
            n += 1
            turn += o["chan"] == lru
            rule += o["chan"] == pick
            with_idle += bool(idle)
            to_idle += bool(idle) and o["chan"] in idle
            if o["chan"] != lru:
                lo = last[o["chan"]]
                broke["to a channel whose last op had ended" if lo and lo["end"] <= t else
                      "to one still running its last op" if lo and lo["start"] <= t else "to one still holding ops"] += 1
        last[o["chan"]] = o
        used[o["chan"]] = i
    return len(chans), n, turn, rule, with_idle, to_idle, broke


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--kinds", default="HDK")
    a = ap.parse_args()
    ops, calls = read(a.trace)
    if not calls:
        sys.exit("channel-rules: no runtime calls in the records (take them with TRACE_ACTS_API=1)")
    for k in a.kinds:
        if k not in NAMES:
            sys.exit(f"channel-rules: --kinds takes H, D and K, not {k}")
        nch, n, turn, rule, with_idle, to_idle, broke = judge(ops, calls, k)
        if not n:
            print(f"{NAMES[k]}: no ops")
            continue
        print(f"{NAMES[k]}: {n} ops over {nch} channels; the turn fits {turn} ({100 * turn / n:.1f}%), "
              f"idle-first {rule} ({100 * rule / n:.1f}%); issued while an idle channel existed: {with_idle}, "
              f"of which to one: {to_idle}; broke the turn: {sum(broke.values())}"
              + (" (" + ", ".join(f"{v} {w}" for w, v in broke.most_common()) + ")" if broke else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
