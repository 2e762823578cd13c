/* cuda_conditions.cu — the conditions a measurement was taken under, recorded with
 * every CUDA result (result->extra["conditions"]): per GPU its name, UUID, SM and
 * memory clocks, clock-event (throttle) reasons, temperature and power before and
 * after the measured repetitions, and the PCIe link; the driver and CUDA versions;
 * the host's CPU and kernel. NVML is read through gpu/nvml.h; where it is missing the
 * record says "unavailable" and carries what the runtime knows. Only reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_internal.h"
#include "nvml.h"

struct cuda_conditions {
    const machine_info_t *m;
    int n;
    int ordinals[SPEC_MAX_DEVICES];
    char uuid[SPEC_MAX_DEVICES][64];
    char name[SPEC_MAX_DEVICES][128];
    int cc_major[SPEC_MAX_DEVICES], cc_minor[SPEC_MAX_DEVICES];
    nvml_sample_t before[SPEC_MAX_DEVICES];
    char date[32];
};

cuda_conditions_t *cuda_conditions_begin(const machine_info_t *m, const int *ordinals, int n) {
    cuda_conditions_t *c = (cuda_conditions_t *)calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->m = m;
    c->n = n < SPEC_MAX_DEVICES ? n : SPEC_MAX_DEVICES;
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(c->date, sizeof c->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    for (int i = 0; i < c->n; i++) {
        c->ordinals[i] = ordinals[i];
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, ordinals[i]) == cudaSuccess) {
            cuda_uuid_string(&p.uuid, c->uuid[i], sizeof c->uuid[i]);
            snprintf(c->name[i], sizeof c->name[i], "%.*s", (int)sizeof c->name[i] - 1, p.name);
            c->cc_major[i] = p.major;
            c->cc_minor[i] = p.minor;
        } else {
            (void)cudaGetLastError();
        }
        nvml_sample_read(c->uuid[i], &c->before[i]);
    }
    return c;
}

static json_t *reasons_json(unsigned long long reasons) {
    json_t *a = json_array();
    for (int bit = 0; a && bit < 64; bit++) {
        if (!(reasons & (1ull << bit)))
            continue;
        char other[24];
        const char *name = nvml_reason_name(bit, other);
        json_array_append_new(a, json_string(name));
    }
    return a;
}

static json_t *sample_json(const nvml_sample_t *s) {
    if (!s->valid)
        return json_null();
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "sm_clock_mhz", json_integer(s->sm_clock_mhz));
    json_object_set_new(o, "mem_clock_mhz", json_integer(s->mem_clock_mhz));
    json_object_set_new(o, "clock_event_reasons", reasons_json(s->clock_event_reasons));
    json_object_set_new(o, "temperature_c", s->temperature_c >= 0 ? json_integer(s->temperature_c) : json_null());
    json_object_set_new(o, "power_w", s->power_w >= 0 ? json_real(s->power_w) : json_null());
    json_object_set_new(o, "pstate", s->pstate >= 0 ? json_integer(s->pstate) : json_null());
    json_object_set_new(o, "pcie_gen", json_integer(s->pcie_gen));
    json_object_set_new(o, "pcie_width", json_integer(s->pcie_width));
    return o;
}

json_t *cuda_conditions_end(cuda_conditions_t *c) {
    if (!c)
        return NULL;
    json_t *root = json_object();
    json_t *gpus = json_array();
    if (!root || !gpus) {
        json_decref(root);
        json_decref(gpus);
        free(c);
        return NULL;
    }
    for (int i = 0; i < c->n; i++) {
        nvml_sample_t after;
        nvml_sample_read(c->uuid[i], &after);
        json_t *g = json_object();
        if (!g)
            continue;
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", c->cc_major[i], c->cc_minor[i]);
        json_object_set_new(g, "ordinal", json_integer(c->ordinals[i]));
        json_object_set_new(g, "name", json_string(c->name[i]));
        json_object_set_new(g, "uuid", json_string(c->uuid[i]));
        json_object_set_new(g, "compute_capability", json_string(cc));
        json_object_set_new(g, "before", sample_json(&c->before[i]));
        json_object_set_new(g, "after", sample_json(&after));
        /* Reasons seen at either reading, gpu_idle aside (idle between runs is normal). */
        unsigned long long seen = (c->before[i].clock_event_reasons | after.clock_event_reasons) & ~1ull;
        json_object_set_new(g, "throttle_reasons_seen", reasons_json(seen));
        const nvml_sample_t *any = after.valid ? &after : &c->before[i];
        if (any->valid) {
            json_object_set_new(g, "sm_clock_max_mhz", json_integer(any->sm_clock_max_mhz));
            json_object_set_new(g, "power_limit_w", any->power_limit_w >= 0 ? json_real(any->power_limit_w) : json_null());
            json_object_set_new(g, "pcie_gen_max", json_integer(any->pcie_gen_max));
            json_object_set_new(g, "pcie_width_max", json_integer(any->pcie_width_max));
        }
        json_array_append_new(gpus, g);
    }
    json_object_set_new(root, "gpus", gpus);
    const machine_info_t *m = c->m;
    json_object_set_new(root, "date", json_string(c->date));
    if (m) {
        json_object_set_new(root, "driver_version", json_string(m->driver_version));
        json_object_set_new(root, "cuda_runtime", json_string(m->cuda_runtime));
        json_object_set_new(root, "cuda_driver", json_string(m->cuda_driver));
        json_object_set_new(root, "host",
                            json_pack("{s:s, s:s, s:s, s:i}", "hostname", m->hostname, "cpu", m->cpu, "kernel",
                                      m->kernel, "cpu_threads", m->cpu_threads));
    }
    json_object_set_new(root, "nvml", json_string(nvml_available() ? "ok" : nvml_status()));
    free(c);
    return root;
}
