# bench/bench.mk — `make bench-gpu` (the Makefile includes this file): the seeds' tables
# on this machine's GPU, streamlab against bench/ref_overlap.cu (an independent plain
# CUDA program) in the same run. BENCH_GPU_FLAGS passes options to bench_gpu, e.g.
#   make bench-gpu BENCH_GPU_FLAGS="--reps 30 --sizes 25 --json build/bench/gpu.jsonl"

BENCH_GPU_BIN := $(BUILD)/bench/bench_gpu
BENCH_REF_BIN := $(BUILD)/bench/ref_overlap
BENCH_GPU_LIBS := $(filter-out $(MHD_LIBS),$(LDLIBS)) -ljansson -lsqlite3 -lm -ldl -lrt
BENCH_GPU_FLAGS ?= --json $(BUILD)/bench/gpu.jsonl
# what bench_gpu and bench_sim link beside their own source and the core
BENCH_C_SUPPORT := bench/ref_client.c bench/bench_opts.c

# each C benchmark (bench_gpu, bench_sim, bench_wide): its own source, the support and the core
$(BUILD)/bench/bench_%: bench/bench_%.c $(BENCH_C_SUPPORT) $(BENCH_C_SUPPORT:.c=.h) $(CORE_OBJ) $(wildcard gpu/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. $(LDFLAGS) -o $@ $< $(BENCH_C_SUPPORT) $(CORE_OBJ) $(BENCH_GPU_LIBS)

# `make bench-sim`: the simulated machine against the machine it names. On a GPU host it
# measures a profile of this machine (build/bench/profile.json; PROFILE_NAME names it)
# with the reference table inside, and simulates it, then simulates the shipped profile of
# its kind (profiles/h100.json or h200.json: the default sim) against that table.
# Anywhere, the shipped profiles against the tables they carry, then each profile against
# the tables of other lent GPUs of its kind (bench/data/NAME-GPU-…json against
# profiles/NAME.json: each measured by bench_sim --measure, dated, with the GPU's UUID):
# how far the same machine moves from one loan to the next.
BENCH_SIM_BIN := $(BUILD)/bench/bench_sim
PROFILE_NAME ?= $(shell hostname)
# --again: the reference table measured a second time right after the first (about 100 s
# more), the sim held against both and the machine's second table against its first: how far
# the machine itself is from its own table (the floor, bench/profile_xval.py). Empty: once.
BENCH_SIM_FLAGS ?= --again

.PHONY: bench-sim
bench-sim: $(BENCH_SIM_BIN)
	@if ls /dev/nvidia[0-9]* >/dev/null 2>&1 || nvidia-smi -L >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(BENCH_REF_BIN) && \
	  $(BENCH_SIM_BIN) --measure $(BENCH_SIM_FLAGS) --ref $(BENCH_REF_BIN) --out $(BUILD)/bench/profile.json \
	    --name "$(PROFILE_NAME)" \
	    --json $(BUILD)/bench/sim.jsonl || exit 1; \
	  kind=$$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o 'H[12]00' | tr H h); \
	  if [ -n "$$kind" ] && [ -f profiles/$$kind.json ]; then \
	    echo "bench-sim: the shipped profiles/$$kind.json against this machine's table:"; \
	    $(BENCH_SIM_BIN) --against $(BUILD)/bench/profile.json profiles/$$kind.json; fi; \
	else $(BENCH_SIM_BIN) --json $(BUILD)/bench/sim.jsonl $(wildcard profiles/*.json) && \
	  for t in $(wildcard bench/data/*-GPU-*.json); do \
	    p=$${t##*/}; $(BENCH_SIM_BIN) --against $$t profiles/$${p%%-GPU-*}.json || exit 1; done; fi

# `make bench-wide`: the sim against the GPU beyond the seeds' table (pageable, the default
# stream's modes, non-blocking streams, the flush, launches, kernels, the other variants,
# sizes 2^20-2^27), each point measured through streamlab's CUDA backend and simulated from
# the same run's calibration (bench/bench_wide.c). On a GPU host it measures, keeps what it
# measured in $(BUILD)/bench/wide.json (bench/data/wide/KIND-GPU-….json are such files, from
# lent GPUs), and simulates the shipped profile of its kind too; anywhere else it simulates the
# kept files, each from its own machine and from the shipped profile of its kind.
BENCH_WIDE_BIN := $(BUILD)/bench/bench_wide
# ... and, first, what a pageable copy costs as a pipeline makes it, against the calibration's
# way of timing it (plain CUDA, bench/probe_pageable.cu)
BENCH_PAGEABLE_BIN := $(BUILD)/bench/probe_pageable

.PHONY: bench-wide
bench-wide: $(BENCH_WIDE_BIN)
	@if ls /dev/nvidia[0-9]* >/dev/null 2>&1 || nvidia-smi -L >/dev/null 2>&1; then \
	  kind=$$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o 'H[12]00' | tr H h); \
	  $(MAKE) --no-print-directory $(BENCH_PAGEABLE_BIN) && $(BENCH_PAGEABLE_BIN) && \
	  $(BENCH_WIDE_BIN) --measure --out $(BUILD)/bench/wide.json --name "$(PROFILE_NAME)" \
	    $$([ -n "$$kind" ] && [ -f profiles/$$kind.json ] && echo --with profiles/$$kind.json); \
	else for t in $(wildcard bench/data/wide/*-GPU-*.json); do \
	  p=$${t##*/}; $(BENCH_WIDE_BIN) --with profiles/$${p%%-GPU-*}.json $$t || exit 1; done; fi

# `make bench-profiles` (no GPU needed): which measured profile of each kind best stands in
# for the other lent GPUs of that kind, each simulated against the tables of the others in
# bench/data (bench/profile_xval.py); how the shipped profiles are chosen. Then the floor:
# the shipped and the tables' own profiles beside the fleet's median and the same machine
# measured again, all held to issue 18's target.
.PHONY: bench-profiles
bench-profiles: $(BENCH_SIM_BIN)
	@python3 bench/profile_xval.py --bench-sim $(BENCH_SIM_BIN) h100 h200 h200x2

# Built like the service's kernels (same nvcc flags), but shares no code with it.
$(BENCH_REF_BIN): bench/ref_overlap.cu bench/seed_kernel.cuh bench/probe_util.cuh
	@mkdir -p $(dir $@)
	@if [ -z "$(NVCC)" ]; then echo "bench-gpu: nvcc not found"; exit 1; fi
	$(NVCC) $(NVCCFLAGS) -o $@ $<

# The plain CUDA probes (bench/probe_*.cu, each behind a bench-* target below): built the same
# way, one rule for all of them.
$(BUILD)/bench/probe_%: bench/probe_%.cu bench/probe_util.cuh bench/seed_kernel.cuh bench/probe_seeds.cuh
	@mkdir -p $(dir $@)
	@if [ -z "$(NVCC)" ]; then echo "$(notdir $@): nvcc not found"; exit 1; fi
	$(NVCC) $(NVCCFLAGS) -o $@ $<

.PHONY: bench-gpu
bench-gpu: $(BENCH_GPU_BIN) $(BENCH_REF_BIN)
	@sh bench/run_gpu.sh $(BENCH_GPU_BIN) $(BENCH_REF_BIN) $(BENCH_GPU_FLAGS)

# Zero-copy against the copy engines, in plain CUDA sharing no code with streamlab:
# DMA alone and both ways (the floor's basis), then the blog kernel in place on a
# mapped pinned array in several shapes, at 2^22 and 2^25, every rep verified.
BENCH_ZC_BIN := $(BUILD)/bench/probe_zero_copy

# Zero-copy traffic beside the copy engines: their aggregate rate, and pipelines whose
# fill and drain a zero-copy share could fill (plain CUDA, bench/probe_split.cu).
BENCH_SPLIT_BIN := $(BUILD)/bench/probe_split

# What a copy costs beyond its bytes, in pieces, over streams and from a graph (plain
# CUDA, bench/probe_copies.cu): the cost that bounds every chunked pipeline.
BENCH_COPIES_BIN := $(BUILD)/bench/probe_copies

# ... and whether a copy costs more when the copies come from many streams (1..256:
# bench/probe_streams.cu), where the many-stream pipelines run slower than the sim says.
BENCH_STREAMS_BIN := $(BUILD)/bench/probe_streams

# ... and what a kernel in a stream beside its copies adds to the many-stream pipelines, even an
# empty one (bench/probe_pipe.cu)
BENCH_PIPE_BIN := $(BUILD)/bench/probe_pipe

# ... and what copies of 64 KiB to 1 MiB cost each, from one stream or eight, and the seeds'
# 2^22 pipeline with every op queued before any runs: the device's floor (bench/probe_small.cu)
BENCH_SMALL_BIN := $(BUILD)/bench/probe_small

# ... and where the seeds' 2^25 pipelines, issued, lose time against that floor: warm first calls,
# an unwritten array, the host starting 0.1 or 0.3 ms ahead (bench/probe_head.cu)
BENCH_HEAD_BIN := $(BUILD)/bench/probe_head

# ... and the seeds' pipeline on arrays of 2^20 to 2^23, issued and gated (bench/probe_sizes.cu)
BENCH_SIZES_BIN := $(BUILD)/bench/probe_sizes

# ... and what a kernel waiting in a copy's stream costs the copy engine, issued and gated, at 2^25
# and 2^22 (bench/probe_deps.cu). The sim of the same patterns, anywhere: build/bench/bench_patterns
# [PROFILE] (bench/bench_patterns.c).
BENCH_DEPS_BIN := $(BUILD)/bench/probe_deps

.PHONY: bench-copies
bench-copies: $(BENCH_COPIES_BIN) $(BENCH_STREAMS_BIN) $(BENCH_PIPE_BIN) $(BENCH_SMALL_BIN) $(BENCH_HEAD_BIN) $(BENCH_SIZES_BIN) \
              $(BENCH_DEPS_BIN)
	@if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then \
	  echo "bench-copies: skipped (no GPU)"; else $(BENCH_COPIES_BIN) 15 && $(BENCH_STREAMS_BIN) 11 && \
	  $(BENCH_PIPE_BIN) 11 && $(BENCH_SMALL_BIN) 21 && $(BENCH_HEAD_BIN) 9 && $(BENCH_SIZES_BIN) 15 && \
	  $(BENCH_DEPS_BIN) 21 && PROBE_LOG2=22 $(BENCH_DEPS_BIN) 21 2 4 8 32 64 128 256; fi

# What issuing a chunk of the seeds' step costs the host, by size, streams, what the host did
# before the rep and whether the device's queue was full (plain CUDA, bench/probe_host.cu).
# Then the step in blocks of one size, 2^25 against 2^22, in sixteen set-ups (bench/probe_issue.cu),
# and each call of the seeds' reps timed, each kind's first apart (bench/probe_calls.cu), a
# 2^25 rep's extra over 2^22 fitted as the calibration fits it, four ways (bench/probe_rep.cu),
# and depth-first against breadth-first issue, rep by rep and in blocks (bench/probe_order.cu).
BENCH_HOST_BIN := $(BUILD)/bench/probe_host
BENCH_ISSUE_BIN := $(BUILD)/bench/probe_issue
BENCH_CALLS_BIN := $(BUILD)/bench/probe_calls
BENCH_REP_BIN := $(BUILD)/bench/probe_rep
BENCH_ORDER_BIN := $(BUILD)/bench/probe_order

.PHONY: bench-host
bench-host: $(BENCH_HOST_BIN) $(BENCH_ISSUE_BIN) $(BENCH_CALLS_BIN) $(BENCH_REP_BIN) $(BENCH_ORDER_BIN)
	@if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then \
	  echo "bench-host: skipped (no GPU)"; else $(BENCH_HOST_BIN) 9 && $(BENCH_ISSUE_BIN) 15 && $(BENCH_CALLS_BIN) 20 && \
	  $(BENCH_REP_BIN) 21 && $(BENCH_ORDER_BIN) 15; fi

.PHONY: bench-split
bench-split: $(BENCH_SPLIT_BIN)
	@if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then \
	  echo "bench-split: skipped (no GPU)"; else $(BENCH_SPLIT_BIN) 15; fi

.PHONY: bench-zero-copy
bench-zero-copy: $(BENCH_ZC_BIN)
	@if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then \
	  echo "bench-zero-copy: skipped (no GPU)"; else $(BENCH_ZC_BIN) 15; fi

# Two GPUs' copies beside each other: alone or together, one direction or both, the host side
# of the two directions on the same pages or on two arrays (plain CUDA, bench/probe_two_gpus.cu).
BENCH_TWO_GPUS_BIN := $(BUILD)/bench/probe_two_gpus

.PHONY: bench-two-gpus
bench-two-gpus: $(BENCH_TWO_GPUS_BIN)
	@if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then \
	  echo "bench-two-gpus: skipped (no GPU)"; else $(BENCH_TWO_GPUS_BIN) 9; fi

# `make bench-soak` (issue 19): one server, the same experiments through REST 20 times at the
# host-bound and two-mode points, interleaved with the reference program; time against run
# index and what the process holds after each round. BENCH_SOAK_FLAGS="--runs 30" and so on.
.PHONY: bench-soak
bench-soak: $(BIN) $(BENCH_REF_BIN)
	@python3 bench/bench_soak.py $(BIN) $(BENCH_REF_BIN) --out $(BUILD)/bench $(BENCH_SOAK_FLAGS)

# `make bench-ab` (issue 19): arms run the same points round by round, who goes first turning,
# each read against the first arm in the same round. By default the reference and this build's
# server; BENCH_AB_FLAGS adds arms (another binary, or the reference with a diagnostic of its
# environment: --arm refG=ref:build/bench/ref_overlap:REF_GAP_US=5000), --points, --rounds.
# --backend sim runs servers' arms on the simulator, as tests/api/test_bench_ab.py checks the tool.
.PHONY: bench-ab
bench-ab: $(BIN) $(BENCH_REF_BIN)
	@python3 bench/ab_rounds.py --arm ref=ref:$(BENCH_REF_BIN) --arm sl=sl:$(BIN) --out $(BUILD)/bench/ab $(BENCH_AB_FLAGS)

# `make bench-alloc` (issue 19): does a pinned array's copy speed depend on the pages it got?
# Arrays made and kept, each timed both ways round by round, with their physical layout where
# /proc/self/pagemap shows it (root); then again after 768 MiB pinned and freed (plain CUDA).
BENCH_ALLOC_BIN := $(BUILD)/bench/probe_alloc
.PHONY: bench-alloc
bench-alloc: $(BENCH_ALLOC_BIN)
	@if ! nvidia-smi -L >/dev/null 2>&1; then echo "bench-alloc: skipped (no GPU)"; else \
	  $(BENCH_ALLOC_BIN) 16 16 21 && MODE=register $(BENCH_ALLOC_BIN) 16 16 21; fi

# `make probe-first-run` (issue 19): fresh servers, each one's first runs at 2^25 x8-x16 against
# its later ones and the reference; per run, each server thread's CPU. BENCH_FIRST_RUN_FLAGS.
.PHONY: probe-first-run
probe-first-run: $(BIN) $(BENCH_REF_BIN)
	@python3 bench/probe_first_run.py $(BIN) $(BENCH_REF_BIN) --out $(BUILD)/bench $(BENCH_FIRST_RUN_FLAGS)

# The CUPTI injection libraries (loaded by the CUDA driver through CUDA_INJECTION64_PATH):
# bench/count_calls.c for bench-calls, bench/trace_acts.c for bench-order.
BENCH_CALLS_LIB := $(BUILD)/bench/libcount_calls.so
BENCH_ORDER_LIB := $(BUILD)/bench/libtrace_acts.so
$(BENCH_CALLS_LIB) $(BENCH_ORDER_LIB): $(BUILD)/bench/lib%.so: bench/%.c
	@mkdir -p $(dir $@)
	@if [ -z "$(NVCC)" ]; then echo "$@: CUDA not found"; exit 1; fi
	$(CC) -shared -fPIC -O2 -Wall -Wextra -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64 \
	  -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/extras/CUPTI/lib64 -lcupti

# `make bench-calls` (issue 19): the CUDA calls one rep makes, by kind, streamlab against the
# reference, counted by CUPTI's callback API through an injection library (bench/count_calls.c).
.PHONY: bench-calls
bench-calls: $(BIN) $(BENCH_REF_BIN) $(BENCH_CALLS_LIB)
	@python3 bench/bench_calls.py $(BIN) $(BENCH_REF_BIN) $(BENCH_CALLS_LIB) --out $(BUILD)/bench

# `make bench-order` (issues 18, 21): the order the engines serve the plain reference's ops in,
# under each CUDA_DEVICE_MAX_CONNECTIONS, from CUPTI's activity records (an injection library,
# bench/trace_acts.c), and what the recording costs the run. BENCH_ORDER_FLAGS: --points, --size,
# --connections, --reps.
.PHONY: bench-order
bench-order: $(BENCH_REF_BIN) $(BENCH_ORDER_LIB)
	@python3 bench/bench_order.py $(BENCH_REF_BIN) $(BENCH_ORDER_LIB) --out $(BUILD)/bench $(BENCH_ORDER_FLAGS)

# `make bench-plain-ops` (issue 18): the plain reference's ops under CUPTI, its array memset before
# every rep and kept, beside the sim's and streamlab's own of the same points on this GPU, op by op
# (bench/bench_plain_ops.py); then the plain program's totals as a table (bench/plain_ops_table.py)
# simulated from this GPU's calibration (bench_sim --against). The kept files: bench/data/plain-ops.
.PHONY: bench-plain-ops
bench-plain-ops: $(BIN) $(BENCH_REF_BIN) $(BENCH_ORDER_LIB) $(BENCH_SIM_BIN)
	@python3 bench/bench_plain_ops.py $(BIN) $(BENCH_REF_BIN) $(BENCH_ORDER_LIB) --out $(BUILD)/bench
	@python3 bench/plain_ops_table.py $(BUILD)/bench/plain-ops.json $(BUILD)/bench/plain-ops-table.json
	@$(BENCH_SIM_BIN) --against $(BUILD)/bench/plain-ops-table.json $(BUILD)/bench/plain-ops-table.json

# `make bench-modes` (issue 18): why some many-stream points run in two modes, rep by rep: each
# rep's total in plain CUDA (bench/probe_modes.cu) under the default queues and 32, and, from
# CUPTI's records, the hardware channels each kind of op ran from and the kernels held behind
# another stream's kernel. BENCH_MODES_FLAGS: --points, --reps, --trials.
BENCH_MODES_BIN := $(BUILD)/bench/probe_modes

.PHONY: bench-modes
bench-modes: $(BENCH_MODES_BIN) $(BENCH_ORDER_LIB)
	@python3 bench/bench_modes.py $(BENCH_MODES_BIN) $(BENCH_ORDER_LIB) --out $(BUILD)/bench $(BENCH_MODES_FLAGS)

# `make bench-timeline` (issue 21): the seeds' 38 points with the default sampled timeline,
# with an event pair around every op, and under CUPTI (its cross-check holds each op of a
# sampled timeline against CUPTI's record of it in the same rep). Spans against totals.
.PHONY: bench-timeline
bench-timeline: $(BIN)
	@python3 bench/bench_timeline.py $(BIN) --out $(BUILD)/bench $(BENCH_TIMELINE_FLAGS)

# `make bench-lane` (issues 18, 21): the host's calls in a timeline, the sim's against the GPU's,
# call by call (bench/bench_lane.py): on a GPU host the seeds' points measured, and simulated from
# this machine's calibration and from the shipped profile; without a GPU, the kept runs'
# machines (bench/data/timeline/calls-*.json) simulated against their calls. BENCH_LANE_FLAGS:
# --sizes, --reps, --against FILE...
.PHONY: bench-lane
bench-lane: $(BIN)
	@python3 bench/bench_lane.py $(BIN) --out $(BUILD)/bench $(BENCH_LANE_FLAGS)

# `make bench-multi-gpu` (issue 19): multi_gpu on two real GPUs through REST against the plain
# reference's mgpu case and one GPU alone, the sim of this machine beside it, and the peer copies
# (bench/bench_multi_gpu.py). Skips where fewer than two GPUs. BENCH_MULTI_GPU_FLAGS: --rounds,
# --reps, --sizes, --streams.
.PHONY: bench-multi-gpu
bench-multi-gpu: $(BIN) $(BENCH_REF_BIN)
	@python3 bench/bench_multi_gpu.py $(BIN) $(BENCH_REF_BIN) --out $(BUILD)/bench $(BENCH_MULTI_GPU_FLAGS)

# `make bench-check` (issue 19): what each way of checking a rep's output costs this host's
# thread right after a D2H wrote it, beside the plain reference's check and the refill
# (bench/probe_check.c; BENCH_CHECK_FLAGS: log2 sizes, default 22 25).
BENCH_CHECK_BIN := $(BUILD)/bench/probe_check
$(BENCH_CHECK_BIN): bench/probe_check.c $(BUILD)/obj/gpu/cpu.o $(BUILD)/obj/gpu/core.o
	@mkdir -p $(dir $@)
	@if [ -z "$(NVCC)" ]; then echo "$@: CUDA not found"; exit 1; fi
	$(CC) $(CFLAGS) -I. -I$(CUDA_HOME)/include -o $@ $< $(BUILD)/obj/gpu/cpu.o $(BUILD)/obj/gpu/core.o -L$(CUDA_HOME)/lib64 -lcudart_static -ljansson -lm -ldl -lrt -lpthread
.PHONY: bench-check
bench-check:
	@if ! nvidia-smi -L >/dev/null 2>&1; then echo "bench-check: skipped (no GPU)"; else \
	  $(MAKE) --no-print-directory $(BENCH_CHECK_BIN) && $(BENCH_CHECK_BIN) $(BENCH_CHECK_FLAGS); fi
