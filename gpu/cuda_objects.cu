/* cuda_objects.cu — what this process holds of CUDA, counted where streamlab makes and
 * frees it (issue 19: after a run, the process must hold what it held before). Every
 * stream, event, graph, graph instance, pinned and device allocation of gpu/cuda_*.cu
 * goes through these wrappers; each counts on success only, so a failed create and a
 * NULL free change nothing. */
#include "cuda.h"
#include "cuda_internal.h"

static long long alive[CUDA_OBJ__COUNT];

static void count(int kind, long long d) {
    __atomic_add_fetch(&alive[kind], d, __ATOMIC_RELAXED);
}

void cuda_objects(long long out[CUDA_OBJ__COUNT]) {
    for (int k = 0; k < CUDA_OBJ__COUNT; k++)
        out[k] = __atomic_load_n(&alive[k], __ATOMIC_RELAXED);
}

cudaError_t sl_stream_create(cudaStream_t *s, unsigned flags) {
    cudaError_t e = cudaStreamCreateWithFlags(s, flags);
    if (e == cudaSuccess)
        count(CUDA_OBJ_STREAM, 1);
    return e;
}

cudaError_t sl_stream_destroy(cudaStream_t s) {
    cudaError_t e = cudaStreamDestroy(s);
    if (e == cudaSuccess)
        count(CUDA_OBJ_STREAM, -1);
    return e;
}

cudaError_t sl_event_create(cudaEvent_t *ev, unsigned flags) {
    cudaError_t e = cudaEventCreateWithFlags(ev, flags);
    if (e == cudaSuccess)
        count(CUDA_OBJ_EVENT, 1);
    return e;
}

cudaError_t sl_event_destroy(cudaEvent_t ev) {
    cudaError_t e = cudaEventDestroy(ev);
    if (e == cudaSuccess)
        count(CUDA_OBJ_EVENT, -1);
    return e;
}

cudaError_t sl_stream_end_capture(cudaStream_t s, cudaGraph_t *g) {
    cudaError_t e = cudaStreamEndCapture(s, g);
    if (e == cudaSuccess && *g)
        count(CUDA_OBJ_GRAPH, 1);
    return e;
}

cudaError_t sl_graph_destroy(cudaGraph_t g) {
    cudaError_t e = cudaGraphDestroy(g);
    if (e == cudaSuccess)
        count(CUDA_OBJ_GRAPH, -1);
    return e;
}

cudaError_t sl_graph_instantiate(cudaGraphExec_t *x, cudaGraph_t g) {
    cudaError_t e = cudaGraphInstantiate(x, g, 0);
    if (e == cudaSuccess)
        count(CUDA_OBJ_GRAPH_EXEC, 1);
    return e;
}

cudaError_t sl_graph_exec_destroy(cudaGraphExec_t x) {
    cudaError_t e = cudaGraphExecDestroy(x);
    if (e == cudaSuccess)
        count(CUDA_OBJ_GRAPH_EXEC, -1);
    return e;
}

cudaError_t sl_host_alloc(void **p, size_t bytes, unsigned flags) {
    cudaError_t e = cudaHostAlloc(p, bytes, flags);
    if (e == cudaSuccess)
        count(CUDA_OBJ_HOST_ALLOC, 1);
    return e;
}

cudaError_t sl_free_host(void *p) {
    cudaError_t e = cudaFreeHost(p);
    if (e == cudaSuccess && p)
        count(CUDA_OBJ_HOST_ALLOC, -1);
    return e;
}

cudaError_t sl_malloc_bytes(void **p, size_t bytes) {
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess)
        count(CUDA_OBJ_DEVICE_ALLOC, 1);
    return e;
}

cudaError_t sl_free(void *p) {
    cudaError_t e = cudaFree(p);
    if (e == cudaSuccess && p)
        count(CUDA_OBJ_DEVICE_ALLOC, -1);
    return e;
}
