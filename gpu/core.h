/* core.h — the ground every gpu/ file stands on: one error enum for the whole program,
 * the spec's enums and their names, the experiment spec (spec_t), what a run records
 * (timelines, statistics, result_t), and what a machine is (calibration_t,
 * device_info_t, machine_info_t). It calls nothing above it: backends, the model and the
 * dispatcher (backend.h) include it, never the other way round. */
#ifndef STREAMLAB_CORE_H
#define STREAMLAB_CORE_H


#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors: one enum for the whole program (curl's CURLcode style) ---- */
typedef enum {
    SL_OK = 0,
    SL_E_PARSE,      /* malformed JSON                         -> 400 */
    SL_E_AUTH,       /* missing or bad token                   -> 401 */
    SL_E_NOTFOUND,   /* unknown id or path                     -> 404 */
    SL_E_METHOD,     /* wrong method                           -> 405 */
    SL_E_CONFLICT,   /* state conflict                         -> 409 */
    SL_E_TOOLARGE,   /* body too large                         -> 413 */
    SL_E_MEDIA,      /* not JSON                               -> 415 */
    SL_E_INVALID,    /* well-formed but invalid                -> 422 */
    SL_E_BUSY,       /* queue full                             -> 429 */
    SL_E_UNAVAILABLE,/* not available on this machine          -> 503 */
    SL_E_DEVICE,     /* a CUDA / device failure during a run   -> 500 */
    SL_E_VERIFY,     /* output did not match the CPU reference -> 500 */
    SL_E_DB,         /* SQLite failure                         -> 500 */
    SL_E_NOMEM,      /* allocation failed                      -> 500 */
    SL_E_INTERNAL,   /* anything else                          -> 500 */
} sl_code_t;

typedef struct sl_error {
    sl_code_t code;
    char message[512];
    char field[64]; /* the spec field at fault, or "" */
} sl_error_t;

const char *sl_code_name(sl_code_t code); /* "invalid", "not_found", ... */
/* Fill err (if not NULL) and return code. printf-style message. */
int sl_error_set(sl_error_t *err, sl_code_t code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- enums of the spec; each has a names table for parsing and printing ---- */
typedef enum {
    VARIANT_SEQUENTIAL, VARIANT_ASYNC_V1, VARIANT_ASYNC_V2, VARIANT_ROUND_ROBIN,
    VARIANT_ENGINE_STREAMS, VARIANT_CPU, VARIANT_HOST_OVERLAP, VARIANT_MULTI_GPU,
    VARIANT_TUNED, VARIANT_ZERO_COPY, VARIANT__COUNT
} variant_t;
typedef enum { KERNEL_BLOG, KERNEL_FILL, KERNEL_COMPUTE, KERNEL__COUNT } kernel_kind_t;
typedef enum { LAUNCH_CHUNK, LAUNCH_MAX_OCCUPANCY, LAUNCH__COUNT } launch_t;
typedef enum { HOSTMEM_PINNED, HOSTMEM_PAGEABLE, HOSTMEM__COUNT } host_memory_t;
typedef enum { DEFSTREAM_LEGACY, DEFSTREAM_PER_THREAD, DEFSTREAM__COUNT } default_stream_t;
typedef enum { SFLAGS_DEFAULT, SFLAGS_NON_BLOCKING, SFLAGS__COUNT } stream_flags_t;
typedef enum { FLUSH_NONE, FLUSH_STREAM_QUERY, FLUSH__COUNT } flush_t;
typedef enum { DRIVER_AUTO, DRIVER_LINUX, DRIVER_TCC, DRIVER_WDDM, DRIVER_MCDM, DRIVER__COUNT } driver_mode_t;
typedef enum { TIMING_EVENTS, TIMING_CUPTI, TIMING__COUNT } timing_t;
/* which ops a traced rep puts events around: a rotating share of them, few enough that
 * the events do not slow the rep (issue 21), or every op in every traced rep (the seeds' way) */
typedef enum { TRACE_SAMPLED, TRACE_ALL, TRACE__COUNT } trace_ops_t;
typedef enum { BACKEND_AUTO, BACKEND_CUDA, BACKEND_SIM, BACKEND_CPU, BACKEND__COUNT } backend_kind_t;
typedef enum { OP_H2D, OP_KERNEL, OP_D2H, OP_HOST, OP__COUNT } op_kind_t;
/* CUDA objects a process holds (gpu/cuda.h cuda_objects, /metrics) */
typedef enum {
    CUDA_OBJ_STREAM, CUDA_OBJ_EVENT, CUDA_OBJ_GRAPH, CUDA_OBJ_GRAPH_EXEC, CUDA_OBJ_HOST_ALLOC, CUDA_OBJ_DEVICE_ALLOC,
    CUDA_OBJ__COUNT
} cuda_obj_t;

extern const char *const variant_names[VARIANT__COUNT];
extern const char *const kernel_names[KERNEL__COUNT];
extern const char *const launch_names[LAUNCH__COUNT];
extern const char *const host_memory_names[HOSTMEM__COUNT];
extern const char *const default_stream_names[DEFSTREAM__COUNT];
extern const char *const stream_flags_names[SFLAGS__COUNT];
extern const char *const flush_names[FLUSH__COUNT];
extern const char *const driver_mode_names[DRIVER__COUNT];
extern const char *const timing_names[TIMING__COUNT];
extern const char *const trace_ops_names[TRACE__COUNT];
extern const char *const backend_names[BACKEND__COUNT];
extern const char *const op_names[OP__COUNT];
extern const char *const cuda_obj_names[CUDA_OBJ__COUNT];
/* index of s in names[0..n), or -1 */
int sl_enum_parse(const char *const *names, int n, const char *s);

/* ---- the experiment spec (API.md "Experiment spec"); server/spec.c fills it ---- */
#define SPEC_MAX_SIZE (1ull << 32) /* elements: 16 GiB of float32 */
#define SPEC_MAX_DEVICES 16
#define SPEC_MAX_STREAMS 1024
#define SPEC_MAX_CHUNKS 65536
#define SPEC_MAX_REPS 1000
#define SPEC_LABEL_MAX 256

typedef struct spec {
    variant_t variant;
    uint64_t size;          /* elements of float32 */
    int streams;            /* 1..1024 */
    int chunks;             /* 1..65536, default: streams */
    kernel_kind_t kernel;
    int kernel_iters;       /* compute kernel rounds */
    int block_size;         /* threads per block, multiple of 32, 32..1024 */
    launch_t launch;
    host_memory_t host_memory;
    default_stream_t default_stream;
    stream_flags_t stream_flags;
    flush_t flush;
    driver_mode_t driver_mode;
    timing_t timing;
    trace_ops_t trace_ops;  /* "trace_ops": sampled (default) | all */
    int reps;               /* measured repetitions; with reps_auto the cap */
    bool reps_auto;         /* "reps": "auto": repeat until the median is known within 0.5% */
    int warmup;
    int devices[SPEC_MAX_DEVICES];
    int device_count;
    backend_kind_t backend;
    bool sync;              /* host_overlap: synchronise before the host does its share */
    double host_share;      /* host_overlap: fraction of elements the host computes */
    bool predict;           /* also run the 1-stream basis and predict this run from its trace */
    int chunk_ramp;         /* not in the API: the tuned variant's chunk sizes ramp up over the first
                             * chunk_ramp chunks (1/2^r .. 1/2 of the others) and down over the last
                             * as many, to shorten pipeline fill and drain; 0: even */
    bool graph;             /* not in the API: the tuned variant's clean reps launch the plan as one
                             * CUDA graph (captured once) instead of issuing its ops one by one */
    char label[SPEC_LABEL_MAX];
    char sim_of[64];        /* "sim_of": the id of a machine the store knows, simulated from its
                             * calibration (backend sim); "": this machine */
} spec_t;

void spec_defaults(spec_t *spec, variant_t variant);

/* ---- what a run records ---- */
typedef struct op_event {
    int device;
    int stream;   /* -1 for host work */
    int chunk;
    op_kind_t op;
    double start_us; /* from the start of the repetition */
    double end_us;
    uint64_t bytes;  /* copies; 0 otherwise */
    /* the issuing thread's call that handed the op over (cudaMemcpyAsync, the launch; a
     * blocking op's until it returned), on the same clock: where the GPU waited for the
     * host, the call shows it. call false: not known (CUPTI timing, host work, old stores) */
    bool call;
    double call_start_us, call_end_us;
} op_event_t;

typedef struct timeline {
    op_event_t *ops;
    size_t count, cap;
    double total_us;
} timeline_t;

int timeline_push(timeline_t *tl, const op_event_t *ev); /* 0 or SL_E_NOMEM */
void timeline_free(timeline_t *tl);

typedef struct stats {
    double median, min, max, mean, stddev;
} stats_t;
void stats_compute(const double *values, size_t n, stats_t *out);
/* The index of the median value: the one closest to the median (the first of equals); 0 when n < 1. */
int stats_median_index(const double *v, int n);
/* y = head + slope * x over n points, fitted robustly (Theil-Sen: the median of the pairwise
 * slopes, then the median of y - slope * x), so one point far off the line moves neither.
 * 0, or -1 (nothing set) where no two points have different x or n > STATS_FIT_MAX. */
#define STATS_FIT_MAX 32
int stats_fit_line(const double *x, const double *y, int n, double *head, double *slope);

/* A run's reps in two groups (modes), where they fall so: the lent H100s draw some many-stream
 * pipelines' reps from two modes (docs/METHOD.md, "Which channel an op runs from"), and a host
 * can change pace mid-run. Reps past 1.5x the median are outliers; the rest, sorted, split at
 * their widest gap that leaves REP_MODES_MIN_SHARE of them (and at least 2) on each side, where
 * that gap passes REP_MODES_GAP of the fastest rep. Fewer than 6 reps: one group. */
#define REP_MODES_GAP 0.05
#define REP_MODES_MIN_SHARE 0.1
typedef struct rep_modes {
    bool two;                 /* false: one group, and the rest is 0 */
    double fast_ms, slow_ms;  /* each group's median */
    int fast_reps, slow_reps; /* how many reps in each */
    int outliers;             /* reps left out, past 1.5x the median */
    int slow_runs;            /* stretches of consecutive slow reps in rep order: 1 is one spell,
                               * as many as slow_reps is every slow rep apart */
} rep_modes_t;
void stats_rep_modes(const double *rep_ms, int n, rep_modes_t *out);
/* reps "auto": is the median of values known within rel (0.005 = 0.5%)? Uses the
 * median's standard error, 1.2533 * stddev / sqrt(n), from at least 5 values. */
bool stats_median_known(const double *values, size_t n, double rel);
#define REPS_AUTO_MAX 200         /* reps "auto" stops here at the latest */
#define REPS_AUTO_BUDGET_MS 10000 /* ... or when this much run time is spent */

struct json_t; /* jansson */

typedef struct result {
    backend_kind_t backend;
    int reps;                 /* measured repetitions */
    double *rep_ms;           /* [reps] total per repetition */
    timeline_t *timelines;    /* [reps] per-op timeline of each repetition */
    int median_rep;           /* index of the median repetition */
    stats_t total_ms;
    double h2d_ms, kernel_ms, d2h_ms, host_ms; /* summed op time by kind, median rep */
    double h2d_gbps, d2h_gbps;
    double overlap;           /* 1 - total / (h2d + kernel + d2h) */
    double floor_ms, efficiency;
    double predicted_ms, prediction_error; /* < 0 where none */
    bool verified;
    char verification[64];    /* how: "cpu_reference", "plan_coverage" */
    struct json_t *extra;     /* backend-specific facts (conditions, choices); may be NULL; owned */
} result_t;

void result_free(result_t *r);
/* Fill median_rep, total_ms, per-kind sums, bandwidths and overlap from rep_ms and timelines. */
void result_summarise(result_t *r);

/* ---- the machine this process runs on ---- */
/* The piece calibration_t.copy_switch_us is measured with (16 MiB each way in 32 copies).
 * Smaller copies pay it in proportion to their bytes: on a lent H100 (GPU-244be7e1,
 * 2026-11-26) a copy both ways cost 0.13, 0.15, 0.29 and 0.44 us more from 8 streams than
 * from one at 64, 128, 256 and 512 KiB (bench/probe_small.cu). */
#define CAL_SWITCH_PIECE_BYTES (512u << 10)

typedef struct calibration {
    bool valid;
    double h2d_gbps, d2h_gbps;       /* pinned, one direction alone (peak) */
    double bidir_gbps;               /* pinned, each direction while both run (peak) */
    double bidir_gbps_min;           /* spread seen */
    double bidir_h2d_gbps, bidir_d2h_gbps; /* each direction's own rate while the other copied too,
                                      * from the both-ways rep that gave bidir_gbps (plan_both_ways_split).
                                      * Kept as measured, not used: two whole-buffer copies started
                                      * together share the link evenly (50.3 and 50.4 GB/s on lent
                                      * H100 GPU-41f331cf, 2026-11-27), where a pipeline's D2Hs lose
                                      * about twice what its H2Ds do (model_device_t.bidir_d2h_share,
                                      * fitted). 0: not measured (before 2026-11-27) */
    double pageable_h2d_gbps, pageable_d2h_gbps; /* a pageable copy as a pipeline waits for it: the
                                      * host's clock around the call and its stream's sync, the
                                      * source just written (median). Until 2026-11-27 timed by
                                      * events on the stream, which miss the driver's staging:
                                      * 16.8 GB/s H2D where pipelines got 6.7 (lent H100) */
    double kernel_ns_per_elem[KERNEL__COUNT]; /* compute: per round beyond compute_base */
    double host_ns_per_elem[KERNEL__COUNT]; /* the host's share of host_overlap: the kernel's work
                                      * on the CPU (OpenMP over the machine's CPUs, as the run
                                      * does it), per element (compute: per round); 0: not
                                      * measured (the sim's constants from seed 000's machine) */
    double compute_base_ns_per_elem; /* compute: what an element costs besides its rounds (its
                                      * load and store, the launch's share), from 16 and 64
                                      * rounds; 0: not measured */
    double copy_submit_us;           /* host time to issue one cudaMemcpyAsync (median) */
    double kernel_launch_us;         /* host time to issue one kernel launch (median) */
    double issue_scale_large;        /* the host's calls cost this many times as much in a rep
                                      * over the seeds' 2^25-element array (128 MiB) as over
                                      * their 2^22 (16 MiB; copy_submit_us, kernel_launch_us):
                                      * the seeds' step over 256 streams, the array memset
                                      * first as every rep does; 0: not measured */
    double issue_first_large_us;     /* of it, what the rep's start event and first H2D, kernel
                                      * and D2H (the first call of each kind) cost together more
                                      * over the 2^25 array than over 2^22, the array just memset:
                                      * the head of a robust line over 1-256 streams; 0: not
                                      * measured */
    double issue_call_large_us;      /* and what every later call costs more (that line's slope);
                                      * 0: not measured */
    double issue_reorder_us;         /* what a copy or kernel call costs the host more where its
                                      * stream's op before it in the rep was not the call just
                                      * before (breadth-first issue, async_v2's order). Not
                                      * measured by the calibration (a few seconds of blocks of
                                      * reps saw 0.001-0.48 on one host as its pace swung by
                                      * 30%): a profile fits it to its reference table
                                      * (profile_refit_reorder). 0: none */
    double zero_copy_gbps;           /* each direction while a kernel reads and writes pinned
                                      * host memory itself (mapped, no copies); 0: unknown */
    double copy_setup_us;            /* device time a copy costs beyond its bytes at the peak
                                      * rate, queued behind another on its engine (median);
                                      * 0: not measured (the sim's built-in latency) */
    double copy_setup_both_us;       /* the same while the other direction copies too, each
                                      * direction's copies in its own stream (median); more
                                      * than copy_setup_us over the derate: 0.5 MiB copies
                                      * both ways cost 3.3-3.9 us each on the lent H100, 2.4
                                      * alone. 0: not measured */
    double copy_setup_h2d_us;        /* copy_setup_us of each direction alone (the median of its
                                      * own reps; copy_setup_us is the median of both): CUPTI
                                      * put a 64 KiB D2H at 2.8 us and an H2D at 3.8 in the
                                      * lent H100's pipelines. 0: not measured (copy_setup_us) */
    double copy_setup_d2h_us;
    double copy_switch_us;           /* a copy of CAL_SWITCH_PIECE_BYTES costs this much more
                                      * where the copy before it on its engine came from another
                                      * stream, as in every multi-stream pipeline (median, both
                                      * directions copying); 0: not measured */
    double dirty_h2d_us_per_mib;     /* an H2D of host memory the host has just written (the
                                      * pipelines memset their array before each rep) costs
                                      * this much more per MiB still dirty in the CPU's cache,
                                      * the array's last MiB: 17-25 us on lent H100s (from a
                                      * 1 MiB array; calibrations before 2026-11-27: a 16 MiB
                                      * array's extra over all 16, 2.4); 0: not measured */
    double dirty_cache_mib;          /* how many of an array's last MiB pay it: the larger of
                                      * a 16 and a 128 MiB array's extra, in MiB at that price
                                      * (1-1.8 on lent H100s; before 2026-11-27 at least 16) */
    double dirty_16mib_us, dirty_large_us; /* those two extras themselves (µs, the median): a 16
                                      * MiB array's and the large one's (the seeds' 2^25, or the
                                      * calibration's buffer where smaller). Kept as measured,
                                      * not yet used: the plain program's 2^22 x1 H2D paid 31 us
                                      * over its bytes where the calibration had 53 (lent H100
                                      * GPU-6154e87d), 30 against 37 (16 MiB: 37.0, 128 MiB: 33.4;
                                      * GPU-41f331cf), 2 against 32 (GPU-509a520c, whose last
                                      * chunks paid 2-45 from point to point; 2026-11-27). 0: not
                                      * measured */
    double rep_lead_us;              /* what a rep's first calls cost the host more than the same
                                      * calls warm, the array just memset: the start event's record
                                      * and the first H2D call, in the seeds' 2^22 step of 4-256
                                      * streams, by the host's clock (the median). Kept as measured,
                                      * not used: noisier than what it measures (4.4-8.0 us in four
                                      * calibrations of one lent H100), and below the lead the
                                      * tables fit (the sim's SIM_REP_LEAD_US). 0: not measured
                                      * (before 2026-11-27 08:40) */
    double host_copy_gbps;           /* the machine's: GB/s every device moves together while
                                      * all of them copy both ways at once (both directions,
                                      * summed over devices), the host side's limit; 0: one
                                      * device, or not measured */
    double host_h2d_gbps;            /* the H2D copies' part of host_copy_gbps (the host reads
                                      * slower than it writes there: 74 of 168 GB/s on a lent
                                      * pair of H100s); 0: not measured */
    int samples;
} calibration_t;

typedef struct device_info {
    int index;
    char name[128];
    char uuid[64];
    int cc_major, cc_minor;
    int sm_count;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int async_engines;          /* copy engines */
    int concurrent_kernels;
    uint64_t mem_bytes;
    char driver_model[16];      /* linux | tcc | wddm | mcdm */
    int pcie_gen, pcie_width;
    calibration_t calib;
} device_info_t;

typedef struct machine_info {
    char id[64];                /* stable: hash of host and device identities */
    char hostname[128];
    char label[128];
    char cpu[128];
    char kernel[128];
    int cpu_threads;
    backend_kind_t backend;     /* what "auto" resolves to here: cuda or sim */
    char cuda_runtime[32];
    char cuda_driver[32];
    char driver_version[32];
    int device_count;
    device_info_t devices[SPEC_MAX_DEVICES];
} machine_info_t;

#ifdef __cplusplus
}
#endif
#endif
