/* devices.c — what this machine is: host facts, CUDA devices (through gpu/cuda.h) or
 * the simulated H100, a stable machine id, calibration, and the machine as JSON. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "devices.h"
#include "cuda.h"

bool cuda_compiled_in(void) {
#ifdef STREAMLAB_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

void sim_device_info(device_info_t *d, int index) {
    memset(d, 0, sizeof *d);
    d->index = index;
    snprintf(d->name, sizeof d->name, "Simulated NVIDIA H100 80GB HBM3");
    snprintf(d->uuid, sizeof d->uuid, "SIM-H100-%d", index);
    d->cc_major = 9;
    d->cc_minor = 0;
    d->sm_count = 132;
    d->max_threads_per_sm = 2048;
    d->max_blocks_per_sm = 32;
    d->async_engines = 2; /* the model uses one per direction */
    d->concurrent_kernels = 1;
    d->mem_bytes = 81559ull << 20; /* nvidia-smi on the lent H100: 81559 MiB */
    snprintf(d->driver_model, sizeof d->driver_model, "linux");
    d->pcie_gen = 5;
    d->pcie_width = 16;
    calibration_t *c = &d->calib;
    c->valid = true;
    c->h2d_gbps = 54.5;       /* H100, pinned, one direction alone (DESIGN.md) */
    c->d2h_gbps = 54.5;
    c->bidir_gbps = 50.2;     /* H100, each direction while both run (DESIGN.md) */
    c->bidir_gbps_min = 43.8; /* lowest seen on the lent H100s (issue 4) */
    c->pageable_h2d_gbps = 25.0; /* assumed until a device calibration replaces it */
    c->pageable_d2h_gbps = 25.0;
    c->kernel_ns_per_elem[KERNEL_BLOG] = 0.54e6 / 33554432.0; /* API.md's H100 example: 0.54 ms at 2^25 */
    c->kernel_ns_per_elem[KERNEL_FILL] = 4.0 / 3.0e3;         /* 4 bytes at ~3 TB/s */
    /* per round, on the pipelines' input, beyond the base of each element (its load, store
     * and share of the launch): H100 GPU-e1a84b4a, 2026-11-24, from 16 and 64 rounds */
    c->kernel_ns_per_elem[KERNEL_COMPUTE] = 0.00166;
    c->compute_base_ns_per_elem = 0.00113;
    /* a grid-stride blog kernel in place on 2^25 mapped pinned elements: 3.238 ms, i.e.
     * 41.5 GB/s each way (H100 GPU-1ee55528, 2026-11-23, bench/probe_zero_copy.cu) */
    c->zero_copy_gbps = 41.5;
    c->copy_submit_us = 2.3;   /* H100 host (issue 3) */
    c->kernel_launch_us = 4.0; /* H100 host (issue 3) */
    c->samples = 0;
}

static void read_cpu_model(char *out, size_t len) {
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ') colon++;
                colon[strcspn(colon, "\n")] = 0;
                snprintf(out, len, "%.100s", colon);
            }
            break;
        }
    }
    fclose(f);
}

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

void machine_discover(machine_info_t *m, bool force_sim, const char *label) {
    memset(m, 0, sizeof *m);
    if (gethostname(m->hostname, sizeof m->hostname - 1) != 0)
        snprintf(m->hostname, sizeof m->hostname, "unknown");
    snprintf(m->label, sizeof m->label, "%s", label ? label : "");
    read_cpu_model(m->cpu, sizeof m->cpu);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof m->kernel, "%.32s %.64s", u.sysname, u.release);
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    m->cpu_threads = nproc > 0 ? (int)nproc : 1;
    int n = force_sim ? 0 : cuda_discover(m);
    if (n > 0) {
        m->backend = BACKEND_CUDA;
        m->device_count = n;
    } else {
        m->backend = BACKEND_SIM;
        const char *env = getenv("STREAMLAB_SIM_DEVICES");
        int nd = env ? atoi(env) : 1;
        if (nd < 1) nd = 1;
        if (nd > SPEC_MAX_DEVICES) nd = SPEC_MAX_DEVICES;
        m->device_count = nd;
        for (int i = 0; i < nd; i++)
            sim_device_info(&m->devices[i], i);
        snprintf(m->cuda_runtime, sizeof m->cuda_runtime, "none");
        snprintf(m->cuda_driver, sizeof m->cuda_driver, "none");
        snprintf(m->driver_version, sizeof m->driver_version, "none");
    }
    /* A stable id. Where CUDA gives every GPU a UUID, the GPU set alone (UUIDs in sorted order):
     * the same GPUs are the same machine whatever the host is called (a container gets a new
     * host name each run) and however CUDA_VISIBLE_DEVICES orders them. Else the host and its
     * devices' names (the simulator's UUIDs are the same on every host). */
    const char *uuids[SPEC_MAX_DEVICES];
    bool by_uuid = m->backend == BACKEND_CUDA && m->device_count > 0;
    for (int i = 0; by_uuid && i < m->device_count; i++) {
        by_uuid = m->devices[i].uuid[0] != 0;
        uuids[i] = m->devices[i].uuid;
        for (int j = i; j > 0 && strcmp(uuids[j - 1], uuids[j]) > 0; j--) {
            const char *t = uuids[j];
            uuids[j] = uuids[j - 1];
            uuids[j - 1] = t;
        }
    }
    uint64_t h = 1469598103934665603ull;
    if (!by_uuid)
        h = fnv1a(h, m->hostname);
    h = fnv1a(h, backend_names[m->backend]);
    for (int i = 0; i < m->device_count; i++) {
        h = fnv1a(h, by_uuid ? uuids[i] : m->devices[i].uuid[0] ? m->devices[i].uuid : m->devices[i].name);
        h = fnv1a(h, "|");
    }
    snprintf(m->id, sizeof m->id, "m-%016llx", (unsigned long long)h);
}

int machine_calibrate(machine_info_t *m, sl_error_t *err) {
    if (m->backend != BACKEND_CUDA)
        return SL_OK;
    int first = SL_OK;
    for (int i = 0; i < m->device_count; i++) {
        sl_error_t e = {0};
        int rc = cuda_calibrate(m, i, &e);
        if (rc && first == SL_OK) {
            first = rc;
            if (err)
                *err = e;
        }
    }
    return first;
}

json_t *machine_to_json(const machine_info_t *m) {
    json_t *gpus = json_array();
    for (int i = 0; gpus && i < m->device_count; i++) {
        const device_info_t *d = &m->devices[i];
        const calibration_t *c = &d->calib;
        json_t *kernel_ns = json_object();
        for (int k = 0; kernel_ns && k < KERNEL__COUNT; k++)
            json_object_set_new(kernel_ns, kernel_names[k], json_real(c->kernel_ns_per_elem[k]));
        json_t *calib = c->valid
            ? json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:f, s:f, s:f, s:f, s:f, s:i}", "h2d_gbps", c->h2d_gbps,
                        "d2h_gbps", c->d2h_gbps, "bidir_gbps", c->bidir_gbps, "bidir_gbps_min", c->bidir_gbps_min,
                        "pageable_h2d_gbps", c->pageable_h2d_gbps, "pageable_d2h_gbps", c->pageable_d2h_gbps,
                        "zero_copy_gbps", c->zero_copy_gbps,
                        "kernel_ns_per_elem", kernel_ns, "compute_base_ns_per_elem", c->compute_base_ns_per_elem,
                        "copy_submit_us", c->copy_submit_us, "kernel_launch_us",
                        c->kernel_launch_us, "copy_setup_us", c->copy_setup_us, "copy_setup_both_us",
                        c->copy_setup_both_us, "samples", c->samples)
            : (json_decref(kernel_ns), json_null());
        json_t *g = json_pack("{s:i, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:I, s:s, s:i, s:i, s:i, s:o}",
                              "index", d->index, "name", d->name, "uuid", d->uuid, "compute_capability", "",
                              "sm_count", d->sm_count, "max_threads_per_sm", d->max_threads_per_sm,
                              "max_blocks_per_sm", d->max_blocks_per_sm, "copy_engines", d->async_engines,
                              "memory_bytes", (json_int_t)d->mem_bytes, "driver_model", d->driver_model,
                              "pcie_gen", d->pcie_gen, "pcie_width", d->pcie_width, "concurrent_kernels",
                              d->concurrent_kernels, "calibration", calib ? calib : json_null());
        if (g) {
            char cc[16];
            snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
            json_object_set_new(g, "compute_capability", json_string(cc));
            json_array_append_new(gpus, g);
        }
    }
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:o}", "id", m->id, "hostname",
                     m->hostname, "label", m->label, "cpu", m->cpu, "kernel", m->kernel, "cpu_threads",
                     m->cpu_threads, "backend", backend_names[m->backend], "cuda_runtime", m->cuda_runtime,
                     "cuda_driver", m->cuda_driver, "driver_version", m->driver_version, "device_count",
                     m->device_count, "gpus", gpus ? gpus : json_array());
}
