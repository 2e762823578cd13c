/* cuda_peer.cu — the multi_gpu experiment's peer-copy measurement (seed 002's P2P):
 * cudaMemcpyPeerAsync from device a to device b, first without peer access (the
 * runtime stages the copy through the host), then with cudaDeviceEnablePeerAccess
 * (direct over NVLink or PCIe), each the best of a few timed copies after a warm-up.
 * Peer access is left as it was found. */
#include <stdio.h>

#include "cuda_internal.h"

#define PEER_BYTES (64ull << 20) /* large enough that latency does not count */
#define PEER_REPS 5

/* Best GB/s of PEER_REPS copies a -> b, timed by events on a's stream. */
static int time_peer(int a, int b, float *src, float *dst, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                     double *best_gbps, sl_error_t *err) {
    int rc = SL_OK;
    *best_gbps = 0;
    for (int r = -1; r < PEER_REPS; r++) { /* r = -1: warm-up */
        float ms = 0;
        CUDA_CHECK(cudaEventRecord(e0, s));
        CUDA_CHECK(cudaMemcpyPeerAsync(dst, b, src, a, PEER_BYTES, s));
        CUDA_CHECK(cudaEventRecord(e1, s));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0 && ms > 0 && (double)PEER_BYTES / (ms * 1e6) > *best_gbps)
            *best_gbps = (double)PEER_BYTES / ((double)ms * 1e6);
    }
cleanup:
    return rc;
}

int cuda_peer_measure(int a, int b, json_t **out, sl_error_t *err) {
    int rc = SL_OK, prev = 0, can_ab = 0, can_ba = 0;
    float *src = NULL, *dst = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double without_gbps = 0, with_gbps = 0;
    bool enabled_ab = false, enabled_ba = false, was_enabled = false;
    cudaError_t e;
    *out = NULL;
    CUDA_CHECK(cudaGetDevice(&prev));
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can_ab, a, b));
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can_ba, b, a));
    CUDA_CHECK(cudaSetDevice(b));
    CUDA_CHECK(sl_malloc(&dst, PEER_BYTES));
    CUDA_CHECK(cudaSetDevice(a));
    CUDA_CHECK(sl_malloc(&src, PEER_BYTES));
    CUDA_CHECK(cudaMemset(src, 0, PEER_BYTES));
    CUDA_CHECK(sl_stream_create(&s, cudaStreamNonBlocking));
    CUDA_CHECK(sl_event_create(&e0, cudaEventDefault));
    CUDA_CHECK(sl_event_create(&e1, cudaEventDefault));
    /* Without peer access: disable it if an earlier run left it on (from a to b). */
    if (can_ab) {
        e = cudaDeviceDisablePeerAccess(b);
        if (e == cudaSuccess)
            was_enabled = true;
        else
            (void)cudaGetLastError(); /* cudaErrorPeerAccessNotEnabled: it was off */
    }
    rc = time_peer(a, b, src, dst, s, e0, e1, &without_gbps, err);
    if (rc)
        goto cleanup;
    if (can_ab && can_ba) {
        CUDA_CHECK(cudaDeviceEnablePeerAccess(b, 0));
        enabled_ab = true;
        CUDA_CHECK(cudaSetDevice(b));
        e = cudaDeviceEnablePeerAccess(a, 0);
        if (e == cudaSuccess)
            enabled_ba = true;
        else if (e == cudaErrorPeerAccessAlreadyEnabled)
            (void)cudaGetLastError();
        else
            CUDA_CHECK(e);
        CUDA_CHECK(cudaSetDevice(a));
        rc = time_peer(a, b, src, dst, s, e0, e1, &with_gbps, err);
        if (rc)
            goto cleanup;
    }
    *out = json_object();
    if (*out) {
        json_object_set_new(*out, "devices", json_pack("[i, i]", a, b));
        json_object_set_new(*out, "can_access_peer", json_boolean(can_ab && can_ba));
        json_object_set_new(*out, "bytes", json_integer((json_int_t)PEER_BYTES));
        json_object_set_new(*out, "reps", json_integer(PEER_REPS));
        json_object_set_new(*out, "without_peer_access_gbps", json_real(without_gbps));
        json_object_set_new(*out, "with_peer_access_gbps", can_ab && can_ba ? json_real(with_gbps) : json_null());
        json_object_set_new(*out, "statistic", json_string("best of reps, cudaMemcpyPeerAsync timed by events"));
    }
cleanup:
    /* Restore peer access as found: off unless it was on before (a to b). */
    if (enabled_ab && !was_enabled && cudaSetDevice(a) == cudaSuccess && cudaDeviceDisablePeerAccess(b) != cudaSuccess)
        (void)cudaGetLastError();
    if (!enabled_ab && was_enabled && cudaSetDevice(a) == cudaSuccess && cudaDeviceEnablePeerAccess(b, 0) != cudaSuccess)
        (void)cudaGetLastError();
    if (enabled_ba && cudaSetDevice(b) == cudaSuccess && cudaDeviceDisablePeerAccess(a) != cudaSuccess)
        (void)cudaGetLastError();
    if (cudaSetDevice(a) == cudaSuccess) {
        if (s)
            cudaStreamSynchronize(s);
        if (s)
            sl_stream_destroy(s);
        if (e0)
            sl_event_destroy(e0);
        if (e1)
            sl_event_destroy(e1);
        if (src)
            sl_free(src);
    }
    if (dst && cudaSetDevice(b) == cudaSuccess)
        sl_free(dst);
    cudaSetDevice(prev);
    return rc;
}
