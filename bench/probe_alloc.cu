/* probe_alloc.cu — does a pinned array's copy speed depend on which pages it got? (issue 19)
 * streamlab's copies ran 0.7-0.9% longer than the plain program's on the GPU's own clock
 * (CUPTI, two lent H100s), and the same program's 16 MiB H2D moved 5% between two runs
 * minutes apart, each run with its own pinned array. Plain CUDA, no streamlab code.
 *
 * Several pinned arrays of MIB are made and kept (cudaMallocHost, as the seeds make theirs;
 * or, with MODE=register, mmap'd anonymous memory pinned by cudaHostRegister), each written
 * once. Then ROUNDS rounds, each timing every array in turn (so drift falls on all alike):
 * one H2D and one D2H of the whole array against one device array, by events on one stream.
 * Per array: the median µs of each direction, its address modulo 2 MiB, and, where
 * /proc/self/pagemap gives frame numbers (root; a lent H100 gave them for both kinds), how many
 * physically contiguous runs its pages form and how many of its 2 MiB-aligned spans are
 * one contiguous run. Then every array is freed, CHURN_MIB of pinned memory made, written
 * and freed (as streamlab's calibration does before a run), and as many arrays again are
 * made and timed: the "after churn" rows.
 * usage: probe_alloc [ARRAYS=8] [MIB=16] [ROUNDS=21]   (MODE=register, CHURN_MIB=768 env) */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "probe_util.cuh"

#define MAX_ARRAYS 64
#define SPAN (2u << 20)

static int reg_mode;

static char *pinned(size_t bytes) {
    char *h = NULL;
    if (!reg_mode) {
        CK(cudaMallocHost((void **)&h, bytes));
    } else {
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            perror("probe_alloc: mmap");
            exit(1);
        }
        h = (char *)m;
        memset(h, 1, bytes); /* the pages exist before they are pinned */
        CK(cudaHostRegister(h, bytes, cudaHostRegisterDefault));
    }
    memset(h, 1, bytes);
    return h;
}

static void unpinned(char *h, size_t bytes) {
    if (!reg_mode) {
        CK(cudaFreeHost(h));
    } else {
        CK(cudaHostUnregister(h));
        if (munmap(h, bytes) != 0) {
            perror("probe_alloc: munmap");
            exit(1);
        }
    }
}

/* From /proc/self/pagemap: the array's physically contiguous runs of 4 KiB pages and how many
 * of its 2 MiB-aligned spans are one run; -1, -1 where the frames cannot be read. */
static void layout(const char *h, size_t bytes, int *runs, int *whole_spans) {
    *runs = *whole_spans = -1;
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0)
        return;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t va = (uintptr_t)h;
    size_t n = bytes / (size_t)page;
    uint64_t prev = 0;
    int r = 0, whole = 0, span_ok = 0, span_pages = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = 0;
        uintptr_t a = va + i * (size_t)page;
        if (pread(fd, &e, sizeof e, (off_t)(a / (uintptr_t)page * sizeof e)) != (ssize_t)sizeof e) {
            close(fd);
            return;
        }
        uint64_t pfn = e & ((1ull << 55) - 1);
        if (!(e >> 63) || pfn == 0) { /* not present, or frames hidden (not root) */
            close(fd);
            return;
        }
        bool cont = i > 0 && pfn == prev + 1;
        r += !cont;
        if (a % SPAN == 0) { /* a new aligned span starts here */
            span_ok = 1;
            span_pages = 0;
        } else if (!cont) {
            span_ok = 0;
        }
        span_pages++;
        if (span_ok && span_pages == (int)(SPAN / (size_t)page))
            whole++;
        prev = pfn;
    }
    close(fd);
    *runs = r;
    *whole_spans = whole;
}

static void time_arrays(const char *what, char **h, int na, char *d, size_t bytes, int rounds, cudaStream_t st,
                        cudaEvent_t e0, cudaEvent_t e1) {
    static double h2d[MAX_ARRAYS][256], d2h[MAX_ARRAYS][256];
    for (int w = 0; w < 2; w++) /* warm: the first DMA to fresh pages is slow */
        for (int i = 0; i < na; i++) {
            CK(cudaMemcpyAsync(d, h[i], bytes, cudaMemcpyHostToDevice, st));
            CK(cudaMemcpyAsync(h[i], d, bytes, cudaMemcpyDeviceToHost, st));
        }
    CK(cudaStreamSynchronize(st));
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < na; i++)
            for (int dir = 0; dir < 2; dir++) {
                float ms = 0;
                CK(cudaEventRecord(e0, st));
                if (dir == 0)
                    CK(cudaMemcpyAsync(d, h[i], bytes, cudaMemcpyHostToDevice, st));
                else
                    CK(cudaMemcpyAsync(h[i], d, bytes, cudaMemcpyDeviceToHost, st));
                CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1));
                CK(cudaEventElapsedTime(&ms, e0, e1));
                (dir == 0 ? h2d : d2h)[i][r] = 1000.0 * ms;
            }
    for (int i = 0; i < na; i++) {
        int runs = 0, whole = 0;
        layout(h[i], bytes, &runs, &whole);
        printf("%s array %d: h2d_us %.2f d2h_us %.2f va_mod_2MiB %zu runs %d whole_2MiB_spans %d\n", what, i,
               probe_median(h2d[i], rounds), probe_median(d2h[i], rounds), (size_t)((uintptr_t)h[i] % SPAN), runs,
               whole);
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    int na = argc > 1 ? atoi(argv[1]) : 8;
    size_t mib = argc > 2 ? strtoull(argv[2], NULL, 0) : 16;
    int rounds = argc > 3 ? atoi(argv[3]) : 21;
    size_t churn = getenv("CHURN_MIB") ? strtoull(getenv("CHURN_MIB"), NULL, 0) : 768;
    reg_mode = getenv("MODE") && strcmp(getenv("MODE"), "register") == 0;
    if (churn > 64 * 128) {
        fprintf(stderr, "probe_alloc: CHURN_MIB at most %d\n", 64 * 128);
        return 2;
    }
    if (na < 1 || na > MAX_ARRAYS || mib < 1 || mib > 4096 || rounds < 1 || rounds > 256) {
        fprintf(stderr, "usage: probe_alloc [ARRAYS 1-%d] [MIB 1-4096] [ROUNDS 1-256]\n", MAX_ARRAYS);
        return 2;
    }
    size_t bytes = mib << 20;
    char *h[MAX_ARRAYS], *d = NULL;
    cudaStream_t st;
    cudaEvent_t e0, e1;
    CK(cudaMalloc((void **)&d, bytes));
    CK(cudaStreamCreate(&st));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("probe_alloc: %d arrays of %zu MiB, %s, %d rounds\n", na, mib,
           reg_mode ? "mmap + cudaHostRegister" : "cudaMallocHost", rounds);
    for (int i = 0; i < na; i++)
        h[i] = pinned(bytes);
    time_arrays("fresh", h, na, d, bytes, rounds, st, e0, e1);
    for (int i = 0; i < na; i++)
        unpinned(h[i], bytes);
    if (churn) { /* pinned memory made, written and freed, 128 MiB at a time */
        size_t left = churn << 20;
        char *c[64];
        size_t cb[64];
        int nc = 0;
        while (left && nc < 64) {
            cb[nc] = left < (128u << 20) ? left : (128u << 20);
            c[nc] = pinned(cb[nc]);
            left -= cb[nc++];
        }
        for (int i = 0; i < nc; i++)
            unpinned(c[i], cb[i]);
    }
    for (int i = 0; i < na; i++)
        h[i] = pinned(bytes);
    time_arrays("after churn", h, na, d, bytes, rounds, st, e0, e1);
    for (int i = 0; i < na; i++)
        unpinned(h[i], bytes);
    CK(cudaFree(d));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(st));
    return 0;
}
