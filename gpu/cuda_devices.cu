/* cuda_devices.cu — cuda_discover: this machine's CUDA devices and versions from the
 * runtime (and NVML for the driver version and PCIe link), and cuda_fail, the error
 * text behind CUDA_CHECK. A machine without a driver or a device is not an error: it
 * discovers 0 devices, quietly, and the service falls back to the simulator. */
#include <stdio.h>
#include <string.h>

#include "cuda.h"
#include "cuda_internal.h"
#include "nvml.h"

int cuda_fail(sl_error_t *err, cudaError_t e, const char *call, const char *file, int line) {
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    sl_code_t code = e == cudaErrorMemoryAllocation ? SL_E_NOMEM : SL_E_DEVICE;
    (void)cudaGetLastError(); /* clear a non-sticky error so the next run starts clean */
    return sl_error_set(err, code, "", "%s:%d: %s: %s (%s)", base, line, call, cudaGetErrorString(e),
                        cudaGetErrorName(e));
}

void cuda_uuid_string(const cudaUUID_t *u, char *buf, size_t n) {
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static void version_string(int v, char *buf, size_t n) {
    /* CUDA encodes 13.0 as 13000 */
    snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

static int attr(cudaDeviceAttr a, int dev, int fallback) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return fallback;
    }
    return v;
}

int cuda_discover(machine_info_t *m) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        /* no driver, no device, or a driver older than the runtime: no CUDA here */
        (void)cudaGetLastError();
        return 0;
    }
    if (n > SPEC_MAX_DEVICES)
        n = SPEC_MAX_DEVICES;
    int rv = 0, dv = 0;
    if (cudaRuntimeGetVersion(&rv) == cudaSuccess)
        version_string(rv, m->cuda_runtime, sizeof m->cuda_runtime);
    if (cudaDriverGetVersion(&dv) == cudaSuccess)
        version_string(dv, m->cuda_driver, sizeof m->cuda_driver);
    if (nvml_driver_version(m->driver_version, sizeof m->driver_version) != 0)
        snprintf(m->driver_version, sizeof m->driver_version, "unknown");

    int found = 0;
    for (int i = 0; i < n; i++) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
            (void)cudaGetLastError();
            break; /* keep devices[k].index == k: stop at the first unreadable one */
        }
        device_info_t *d = &m->devices[found];
        memset(d, 0, sizeof *d);
        d->index = i;
        snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof d->name - 1, p.name);
        cuda_uuid_string(&p.uuid, d->uuid, sizeof d->uuid);
        d->cc_major = p.major;
        d->cc_minor = p.minor;
        d->sm_count = p.multiProcessorCount;
        d->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
        d->max_blocks_per_sm = attr(cudaDevAttrMaxBlocksPerMultiprocessor, i, p.maxBlocksPerMultiProcessor);
        d->async_engines = p.asyncEngineCount;
        d->concurrent_kernels = p.concurrentKernels;
        d->mem_bytes = (uint64_t)p.totalGlobalMem;
#ifdef _WIN32
        /* TCC where the attribute says so; WDDM (or MCDM, which the runtime does not
         * tell apart from WDDM) otherwise. */
        snprintf(d->driver_model, sizeof d->driver_model, "%s",
                 attr(cudaDevAttrTccDriver, i, 0) ? "tcc" : "wddm");
#else
        snprintf(d->driver_model, sizeof d->driver_model, "linux");
#endif
        nvml_sample_t s;
        if (nvml_sample_read(d->uuid, &s) == 0) {
            /* the link the slot allows; the current one drops when the GPU idles */
            d->pcie_gen = s.pcie_gen_max ? s.pcie_gen_max : s.pcie_gen;
            d->pcie_width = s.pcie_width_max ? s.pcie_width_max : s.pcie_width;
        }
        found++;
    }
    m->device_count = found;
    return found;
}
