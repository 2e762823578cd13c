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
pool's turn, by the state of the channel it took. Then, per copy engine, how it chose its next copy
(--stay): where a copy ended and the engine went straight on (within 20 us) while its channel held a
next copy, whether it stayed on that channel, against how long before the copy's end that next copy
was ready (its call returned; a D2H: its kernel ended too). With --reps N (N streams a rep, one H2D
and one D2H a stream; records without runtime calls will do), per rep: which D2H channels the
streams of each H2D channel took, and the D2H tail (the last D2H's end after the last H2D's).
A probe: it prints, it asserts nothing. Records of
the lent H100 GPU-bdb97acb (2026-11-27) are in bench/data/probes (GPU-bdb97acb-acts-api-*).

usage: channel_rules.py TRACE [--kinds HDK] [--stay] [--reps N]"""
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


STAY_BINS = (-1e9, 0, 5, 10, 20, 50, 1e9)


def stays(ops, calls, kind):
    """[(lo, hi, copies, stayed)] over STAY_BINS: the engine's choice after each copy of `kind` that a
    next copy followed within 20 us, by how long (us) before that copy ended its channel's next copy
    was ready."""
    mine = sorted((o for o in ops if o["kind"] == kind), key=lambda o: o["start"])
    kernel_end = {}
    for o in ops:
        if o["kind"] == "K":
            kernel_end.setdefault(o["stream"], []).append(o["end"])
    by_chan = collections.defaultdict(list)
    for o in mine:
        by_chan[o["chan"]].append(o)
    after = {}  # corr -> the next copy issued into the same channel
    for chan_ops in by_chan.values():
        chan_ops.sort(key=lambda o: o["corr"])
        for a, b in zip(chan_ops, chan_ops[1:]):
            after[a["corr"]] = b
    rows = collections.defaultdict(lambda: [0, 0])
    for cur, nxt in zip(mine, mine[1:]):
        m = after.get(cur["corr"])
        if m is None or nxt["start"] - cur["end"] > 20000 or m["corr"] not in calls:
            continue
        ready = calls[m["corr"]]
        if kind == "D":  # its kernel: the last of its stream to end before the D2H started
            ends = [e for e in kernel_end.get(m["stream"], []) if e <= m["start"] + 1000]
            ready = max(ends, default=ready)
        lead_us = (cur["end"] - ready) / 1000
        b = next(i for i in range(len(STAY_BINS) - 1) if lead_us < STAY_BINS[i + 1])
        rows[b][0] += 1
        rows[b][1] += nxt["chan"] == cur["chan"]
    return [(STAY_BINS[b], STAY_BINS[b + 1], n, k) for b, (n, k) in sorted(rows.items())]


def mapping(ops, n):
    """Per rep of n streams: (H2D channel -> the D2H channels its streams took, D2H tail in us)."""
    h2d = sorted((o for o in ops if o["kind"] == "H"), key=lambda o: o["corr"])
    d2h = sorted((o for o in ops if o["kind"] == "D"), key=lambda o: o["corr"])
    if len(h2d) != len(d2h) or len(h2d) % n:
        print(f"channel-rules: {len(h2d)} H2Ds and {len(d2h)} D2Hs, not whole reps of {n}: the reps below may be "
              "misaligned (a trace's warm-up reps count as reps too)", file=sys.stderr)
    out = []
    for r in range(min(len(h2d), len(d2h)) // n):
        hs, ds = h2d[r * n:(r + 1) * n], d2h[r * n:(r + 1) * n]
        to = collections.defaultdict(set)
        for h, d in zip(hs, ds):
            to[h["chan"]].add(d["chan"])
        out.append((dict(to), (max(o["end"] for o in ds) - max(o["end"] for o in hs)) / 1000))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--kinds", default="HDK")
    ap.add_argument("--stay", action="store_true", help="also the copy engines' stay decision")
    ap.add_argument("--reps", type=int, metavar="N", help="per rep of N streams: channel map and D2H tail")
    a = ap.parse_args()
    ops, calls = read(a.trace)
    if a.reps is not None:
        if a.reps < 1:
            sys.exit("channel-rules: --reps takes the streams a rep, 1 or more")
        for r, (to, tail) in enumerate(mapping(ops, a.reps)):
            print(f"rep {r}: " + " ".join(f"{h}->{'/'.join(map(str, sorted(d)))}" for h, d in sorted(to.items()))
                  + f"  D2H tail {tail:.0f} us")
        if not calls and not a.stay:
            return 0
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
    for k in (a.kinds.replace("K", "") if a.stay else ""):
        print(f"{NAMES[k]} engine, its next copy ready before the copy ended by: "
              + "; ".join(f"{'<' if lo < -1e8 else ''}{'' if lo < -1e8 else f'{lo:g}'}"
                          f"{'' if lo < -1e8 else '-' if hi < 1e8 else '+'}{f'{hi:g}' if hi < 1e8 else ''} us "
                          f"stayed {k2} of {n}"
                          for lo, hi, n, k2 in stays(ops, calls, k)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
