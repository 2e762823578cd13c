/* cuda_objects.cu — what this process holds of CUDA, counted where streamlab makes and
 * frees it (issue 19: after a run, the process must hold what it held before). Every
 * stream, event, graph, graph instance, pinned and device allocation of gpu/cuda_*.cu
 * goes through these wrappers; each counts on success only, so a failed create and a
 * NULL free change nothing. */
#include "cuda.h"
#include "cuda_internal.h"

static long long alive[CUDA_OBJ__COUNT];

/* e, after counting d of kind where took (the call succeeded and made or freed one) */
static cudaError_t counted(cudaError_t e, bool took, int kind, long long d) {
    if (e == cudaSuccess && took)
        __atomic_add_fetch(&alive[kind], d, __ATOMIC_RELAXED);
    return e;
}

void cuda_objects(long long out[CUDA_OBJ__COUNT]) {
    for (int k = 0; k < CUDA_OBJ__COUNT; k++)
        out[k] = __atomic_load_n(&alive[k], __ATOMIC_RELAXED);
}

cudaError_t sl_stream_create(cudaStream_t *s, unsigned flags) {
    return counted(cudaStreamCreateWithFlags(s, flags), true, CUDA_OBJ_STREAM, 1);
}

cudaError_t sl_stream_destroy(cudaStream_t s) {
    return counted(cudaStreamDestroy(s), true, CUDA_OBJ_STREAM, -1);
}

cudaError_t sl_event_create(cudaEvent_t *ev, unsigned flags) {
    return counted(cudaEventCreateWithFlags(ev, flags), true, CUDA_OBJ_EVENT, 1);
}

cudaError_t sl_event_destroy(cudaEvent_t ev) {
    return counted(cudaEventDestroy(ev), true, CUDA_OBJ_EVENT, -1);
}

cudaError_t sl_stream_end_capture(cudaStream_t s, cudaGraph_t *g) {
    cudaError_t e = cudaStreamEndCapture(s, g);
    return counted(e, e == cudaSuccess && *g, CUDA_OBJ_GRAPH, 1);
}

cudaError_t sl_graph_destroy(cudaGraph_t g) {
    return counted(cudaGraphDestroy(g), true, CUDA_OBJ_GRAPH, -1);
}

cudaError_t sl_graph_instantiate(cudaGraphExec_t *x, cudaGraph_t g) {
    return counted(cudaGraphInstantiate(x, g, 0), true, CUDA_OBJ_GRAPH_EXEC, 1);
}

cudaError_t sl_graph_exec_destroy(cudaGraphExec_t x) {
    return counted(cudaGraphExecDestroy(x), true, CUDA_OBJ_GRAPH_EXEC, -1);
}

cudaError_t sl_host_alloc(void **p, size_t bytes, unsigned flags) {
    return counted(cudaHostAlloc(p, bytes, flags), true, CUDA_OBJ_HOST_ALLOC, 1);
}

cudaError_t sl_free_host(void *p) {
    return counted(cudaFreeHost(p), p != NULL, CUDA_OBJ_HOST_ALLOC, -1);
}

cudaError_t sl_malloc_bytes(void **p, size_t bytes) {
    return counted(cudaMalloc(p, bytes), true, CUDA_OBJ_DEVICE_ALLOC, 1);
}

cudaError_t sl_free(void *p) {
    return counted(cudaFree(p), p != NULL, CUDA_OBJ_DEVICE_ALLOC, -1);
}
