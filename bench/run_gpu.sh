#!/bin/sh
# bench/run_gpu.sh — run the GPU benchmark (make bench-gpu): bench_gpu against the
# reference program, or a clear skip where this machine has no GPU.
# usage: run_gpu.sh BENCH_GPU_BIN REF_BIN [bench_gpu options]
set -u
bench=$1
ref=$2
shift 2
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then
    echo "bench-gpu: skipped (no GPU)"
    exit 0
fi
exec "$bench" --ref "$ref" "$@"
