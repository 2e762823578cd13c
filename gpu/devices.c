/* devices.c — what this machine is: host facts, CUDA devices (through gpu/cuda.h) or
 * the simulated H100 (the default profile, gpu/profile.c), a stable machine id, and
 * calibration. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "devices.h"
#include "profile.h"
#include "cuda.h"

bool cuda_compiled_in(void) {
#ifdef STREAMLAB_HAVE_CUDA
    return true;
#else
    return false;
#endif
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
    if (first == SL_OK && m->device_count > 1) {
        int rc = cuda_calibrate_host(m, err);
        if (rc)
            first = rc;
    }
    return first;
}
