/* probe_order.cu — does the host pay more to issue the seeds' chunks breadth-first? The
 * reference's own tables say so (its async_v2 issue is 1.2-1.4x the sim's on the profiles'
 * own tables, its async_v1 0.9-1.0x), the calibration said not (GPU-51996e14). First the
 * orders alternate rep by rep, so the host's pace cancels in each round's ratio:
 *   v1   depth-first: chunk i's H2D, kernel and D2H, then chunk i + 1's (async_v1);
 *   v2   breadth-first: every H2D, then every kernel, then every D2H (async_v2);
 *   v2c  breadth-first with the chunks of one hardware connection together (stream % 8:
 *        0 8 16 ..., 1 9 17 ...): if a call costs more where it goes to another connection
 *        than the call before, v2c costs what v1 does;
 *   v1r  depth-first, the array read after the rep as the reference checks it (the others
 *        do not read it);
 *   v2r  breadth-first, the array read after the rep.
 * The reference's step otherwise: blocking streams, the array memset before each rep, events
 * on the legacy stream around the issue, the issue timed from before the start event to
 * after the stop event. Per size and stream count: the median issue and total of each order,
 * and the median over the rounds of each order's issue over v1's in the same round.
 * Then blocks as the reference serves its points (each order's 3 warm-ups and 20 reps
 * together, the array read after each rep), v1 and v2 alternated block by block, on streams
 * made for the block (as the reference and each streamlab run make theirs) or kept.
 * On lent H100s (2026-11-26, 15 rounds, pinned to one CPU as the tables' reference is, and
 * not), alternated rep by rep: v2 over v1 0.92-1.04 at 2^22 (32, 64 and 256 streams) and at
 * 2^25 x32-x64, 0.99-1.20 at 2^25 x256 (GPU-a74e169b, GPU-2c32901c, GPU-6dcbbc94); v2c never
 * below v2; the read changes neither. In blocks (GPU-6dcbbc94), at 2^22 x32, x256 and 2^25
 * x32, x256: 1.05, 1.16, 1.02 and 1.10 on kept streams; 0.90-1.01, 1.10-1.15, 0.97-1.00 and
 * 1.28-1.30 on fresh ones (two runs). The reference served on the same GPU, the same
 * points: 1.16, 1.18, 1.05 and 1.19 (medians of five rounds). So a breadth-first
 * rep after a breadth-first rep costs the host more, one after a depth-first rep does not:
 * the tables, and a pipeline's reps, run in blocks.
 * Plain CUDA, nothing of streamlab's. usage: probe_order [ROUNDS] */
#include <vector>
#include "probe_util.cuh"
#include "seed_kernel.cuh"

enum { MAXS = 256, ORDERS = 5, CONNECTIONS = 8 };
static cudaStream_t kept[MAXS];
static volatile float sink; /* the read after a rep is not optimised away */

static double med(std::vector<double> v) { return v.empty() ? 0 : probe_median(v.data(), (int)v.size()); }

/* One rep of order o over n elements in S chunks; its issue time (µs) and total (ms). */
static void rep(int o, const cudaStream_t *st, float *h, float *d, size_t n, int S, cudaEvent_t e0, cudaEvent_t e1,
                double *issue, double *total) {
    int c = (int)(n / (size_t)S);
    std::vector<int> ord(S);
    for (int i = 0; i < S; i++) ord[i] = i;
    if (o == 2) /* v2c's order: by connection */
        for (int i = 0, k = 0; i < CONNECTIONS; i++)
            for (int j = i; j < S; j += CONNECTIONS) ord[k++] = j;
    memset(h, 0, n * 4);
    double t0 = probe_now_us();
    CK(cudaEventRecord(e0, 0));
    if (o == 0 || o == 3) { /* v1, v1r */
        for (int i = 0; i < S; i++) {
            size_t off = (size_t)i * c;
            CK(cudaMemcpyAsync(d + off, h + off, (size_t)c * 4, cudaMemcpyHostToDevice, st[i]));
            kernel<<<c / BLOCK, BLOCK, 0, st[i]>>>(d, (int)off);
            CK(cudaMemcpyAsync(h + off, d + off, (size_t)c * 4, cudaMemcpyDeviceToHost, st[i]));
        }
    } else {
        for (int k = 0; k < S; k++) {
            size_t off = (size_t)ord[k] * c;
            CK(cudaMemcpyAsync(d + off, h + off, (size_t)c * 4, cudaMemcpyHostToDevice, st[ord[k]]));
        }
        for (int k = 0; k < S; k++)
            kernel<<<c / BLOCK, BLOCK, 0, st[ord[k]]>>>(d, (int)((size_t)ord[k] * c));
        for (int k = 0; k < S; k++) {
            size_t off = (size_t)ord[k] * c;
            CK(cudaMemcpyAsync(h + off, d + off, (size_t)c * 4, cudaMemcpyDeviceToHost, st[ord[k]]));
        }
    }
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1, 0));
    *issue = probe_now_us() - t0;
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    *total = ms;
    if (o >= 3) { /* v1r, v2r */
        float s = 0;
        for (size_t i = 0; i < n; i++) s += h[i];
        sink = s;
    }
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    size_t big = (size_t)1 << 25;
    float *h, *d;
    CK(cudaHostAlloc((void **)&h, big * 4, 0));
    CK(cudaMalloc((void **)&d, big * 4));
    for (int i = 0; i < MAXS; i++) CK(cudaStreamCreate(&kept[i]));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const char *name[ORDERS] = {"v1", "v2", "v2c", "v1r", "v2r"};
    printf("size  streams | issue us: v1 v2 v2c v1r v2r | total ms: v1 v2 v2c v1r v2r | issue over v1's, same round: v2 "
           "v2c v1r v2r\n");
    for (int lg = 22; lg <= 25; lg += 3)
        for (int S : {32, 64, 256}) {
            size_t n = (size_t)1 << lg;
            std::vector<double> issue[ORDERS], total[ORDERS], ratio[ORDERS];
            for (int r = -3; r < rounds; r++) {
                double is[ORDERS], to[ORDERS];
                for (int o = 0; o < ORDERS; o++) rep(o, kept, h, d, n, S, e0, e1, &is[o], &to[o]);
                if (r < 0) continue;
                for (int o = 0; o < ORDERS; o++) {
                    issue[o].push_back(is[o]);
                    total[o].push_back(to[o]);
                    ratio[o].push_back(is[o] / is[0]);
                }
            }
            printf("2^%d  %4d |", lg, S);
            for (int o = 0; o < ORDERS; o++) printf(" %7.1f", med(issue[o]));
            printf(" |");
            for (int o = 0; o < ORDERS; o++) printf(" %6.3f", med(total[o]));
            printf(" |");
            for (int o = 1; o < ORDERS; o++) printf(" %s %5.3f", name[o], med(ratio[o]));
            printf("\n");
        }
    /* As the reference serves its table: one order's 3 warm-ups and 20 reps in a block, the
     * array read after each rep; on streams created for the block and destroyed after it (as
     * the reference and each streamlab run make theirs), or on the streams kept since the
     * start. Per pair of rounds: v1 and v2 on fresh streams, then on the kept ones. Each
     * block's median issue; v2's over v1's of the same kind in the pair, and fresh over kept. */
    printf("blocks as the reference serves them | issue us, fresh streams: v1 v2, kept: v1 v2 | v2 over v1: fresh kept | "
           "fresh over kept: v1 v2\n");
    for (int lg = 22; lg <= 25; lg += 3)
        for (int S : {32, 256}) {
            size_t n = (size_t)1 << lg;
            std::vector<double> blk[2][2], v2v1[2], fk[2]; /* [fresh][order] */
            for (int pair = 0; pair < (rounds + 2) / 3; pair++) {
                double m[2][2];
                for (int fresh = 1; fresh >= 0; fresh--)
                    for (int o = 0; o < 2; o++) {
                        cudaStream_t made[MAXS];
                        const cudaStream_t *ss = kept;
                        if (fresh) {
                            for (int i = 0; i < S; i++) CK(cudaStreamCreate(&made[i]));
                            ss = made;
                        }
                        std::vector<double> is;
                        for (int r = -3; r < 20; r++) {
                            double a = 0, b = 0;
                            rep(o ? 4 : 3, ss, h, d, n, S, e0, e1, &a, &b);
                            if (r >= 0) is.push_back(a);
                        }
                        if (fresh)
                            for (int i = 0; i < S; i++) CK(cudaStreamDestroy(made[i]));
                        m[fresh][o] = med(is);
                        blk[fresh][o].push_back(m[fresh][o]);
                    }
                for (int f = 0; f < 2; f++) v2v1[f].push_back(m[f][1] / m[f][0]);
                for (int o = 0; o < 2; o++) fk[o].push_back(m[1][o] / m[0][o]);
            }
            printf("2^%d  %4d | %7.1f %7.1f  %7.1f %7.1f | %5.3f %5.3f | %5.3f %5.3f\n", lg, S, med(blk[1][0]),
                   med(blk[1][1]), med(blk[0][0]), med(blk[0][1]), med(v2v1[1]), med(v2v1[0]), med(fk[0]), med(fk[1]));
        }
    return 0;
}
