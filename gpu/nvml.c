/* nvml.c — NVML (libnvidia-ml.so.1) loaded at run time: the measurement conditions
 * a result records (clocks, clock-event reasons, temperature, power, PCIe link) and
 * the driver version. Nothing here links against NVML: without the library (CI, a
 * container without the NVIDIA runtime) every call says "unavailable" and the
 * program goes on. Must not call CUDA; only reads, never sets, the device's state. */
#include "nvml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The few NVML types used, as NVML's own header declares them (not installed here). */
typedef int nvml_return_t;          /* nvmlReturn_t: 0 = NVML_SUCCESS */
typedef struct nvml_device *nvml_device_t;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_TEMPERATURE_GPU = 0 };

static struct {
    pthread_once_t once;
    bool ok;
    char status[160];
    void *lib;
    nvml_return_t (*init)(void);
    const char *(*error_string)(nvml_return_t);
    nvml_return_t (*driver_version)(char *, unsigned);
    nvml_return_t (*by_uuid)(const char *, nvml_device_t *);
    nvml_return_t (*clock)(nvml_device_t, int, unsigned *);
    nvml_return_t (*max_clock)(nvml_device_t, int, unsigned *);
    nvml_return_t (*reasons)(nvml_device_t, unsigned long long *);
    nvml_return_t (*temperature)(nvml_device_t, int, unsigned *);
    nvml_return_t (*power)(nvml_device_t, unsigned *);
    nvml_return_t (*power_limit)(nvml_device_t, unsigned *);
    nvml_return_t (*pstate)(nvml_device_t, int *);
    nvml_return_t (*pcie_gen)(nvml_device_t, unsigned *);
    nvml_return_t (*pcie_width)(nvml_device_t, unsigned *);
    nvml_return_t (*pcie_gen_max)(nvml_device_t, unsigned *);
    nvml_return_t (*pcie_width_max)(nvml_device_t, unsigned *);
} nv = {.once = PTHREAD_ONCE_INIT};

/* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
#define NVML_SYM(field, name) (*(void **)&nv.field = dlsym(nv.lib, name))

static void nvml_load(void) {
    nv.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib) {
        snprintf(nv.status, sizeof nv.status, "unavailable: libnvidia-ml.so.1 not found");
        return;
    }
    NVML_SYM(init, "nvmlInit_v2");
    NVML_SYM(error_string, "nvmlErrorString");
    NVML_SYM(driver_version, "nvmlSystemGetDriverVersion");
    NVML_SYM(by_uuid, "nvmlDeviceGetHandleByUUID");
    NVML_SYM(clock, "nvmlDeviceGetClockInfo");
    NVML_SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
    /* Renamed in CUDA 12.2's NVML ("clocks event reasons"); older drivers have the old name. */
    if (!NVML_SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
        NVML_SYM(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    NVML_SYM(temperature, "nvmlDeviceGetTemperature");
    NVML_SYM(power, "nvmlDeviceGetPowerUsage");
    NVML_SYM(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    NVML_SYM(pstate, "nvmlDeviceGetPerformanceState");
    NVML_SYM(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    NVML_SYM(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
    NVML_SYM(pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
    NVML_SYM(pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
    if (!nv.init || !nv.by_uuid) {
        snprintf(nv.status, sizeof nv.status, "unavailable: libnvidia-ml.so.1 lacks nvmlInit_v2");
        dlclose(nv.lib);
        nv.lib = NULL;
        return;
    }
    nvml_return_t r = nv.init();
    if (r != 0) {
        snprintf(nv.status, sizeof nv.status, "unavailable: nvmlInit_v2: %s",
                 nv.error_string ? nv.error_string(r) : "error");
        dlclose(nv.lib);
        nv.lib = NULL;
        return;
    }
    /* NVML stays loaded and initialised for the life of the process. */
    nv.ok = true;
    nv.status[0] = '\0';
}

bool nvml_available(void) {
    pthread_once(&nv.once, nvml_load);
    return nv.ok;
}

const char *nvml_status(void) {
    pthread_once(&nv.once, nvml_load);
    return nv.status;
}

int nvml_driver_version(char *buf, size_t n) {
    if (n)
        buf[0] = '\0';
    if (!nvml_available() || !nv.driver_version || n == 0)
        return -1;
    char tmp[96];
    if (nv.driver_version(tmp, sizeof tmp) != 0)
        return -1;
    snprintf(buf, n, "%s", tmp);
    return 0;
}

int nvml_sample_read(const char *uuid, nvml_sample_t *out) {
    memset(out, 0, sizeof *out);
    out->temperature_c = -1;
    out->power_w = -1;
    out->power_limit_w = -1;
    out->pstate = -1;
    nvml_device_t dev;
    if (!nvml_available() || !uuid || !*uuid || nv.by_uuid(uuid, &dev) != 0)
        return -1;
    unsigned u;
    if (nv.clock && nv.clock(dev, NVML_CLOCK_SM, &u) == 0)
        out->sm_clock_mhz = u;
    if (nv.clock && nv.clock(dev, NVML_CLOCK_MEM, &u) == 0)
        out->mem_clock_mhz = u;
    if (nv.max_clock && nv.max_clock(dev, NVML_CLOCK_SM, &u) == 0)
        out->sm_clock_max_mhz = u;
    unsigned long long reasons;
    if (nv.reasons && nv.reasons(dev, &reasons) == 0)
        out->clock_event_reasons = reasons;
    if (nv.temperature && nv.temperature(dev, NVML_TEMPERATURE_GPU, &u) == 0)
        out->temperature_c = (int)u;
    if (nv.power && nv.power(dev, &u) == 0) /* milliwatts */
        out->power_w = u / 1000.0;
    if (nv.power_limit && nv.power_limit(dev, &u) == 0)
        out->power_limit_w = u / 1000.0;
    int ps;
    if (nv.pstate && nv.pstate(dev, &ps) == 0 && ps >= 0 && ps < 32)
        out->pstate = ps;
    if (nv.pcie_gen && nv.pcie_gen(dev, &u) == 0)
        out->pcie_gen = (int)u;
    if (nv.pcie_width && nv.pcie_width(dev, &u) == 0)
        out->pcie_width = (int)u;
    if (nv.pcie_gen_max && nv.pcie_gen_max(dev, &u) == 0)
        out->pcie_gen_max = (int)u;
    if (nv.pcie_width_max && nv.pcie_width_max(dev, &u) == 0)
        out->pcie_width_max = (int)u;
    out->valid = true;
    return 0;
}

/* NVML's nvmlClocksEventReason* bits, in bit order (nvml.h, driver 580). */
static const char *const reason_names[] = {
    "gpu_idle",            /* 0x001 */
    "applications_clocks", /* 0x002 */
    "sw_power_cap",        /* 0x004 */
    "hw_slowdown",         /* 0x008 */
    "sync_boost",          /* 0x010 */
    "sw_thermal_slowdown", /* 0x020 */
    "hw_thermal_slowdown", /* 0x040 */
    "hw_power_brake",      /* 0x080 */
    "display_clocks",      /* 0x100 */
};

const char *nvml_reason_name(int bit, char other[24]) {
    if (bit >= 0 && (size_t)bit < sizeof reason_names / sizeof reason_names[0] && reason_names[bit])
        return reason_names[bit];
    snprintf(other, 24, "bit%d", bit);
    return other;
}

void nvml_reasons_str(unsigned long long reasons, char *buf, size_t n) {
    size_t used = 0;
    if (n == 0)
        return;
    buf[0] = '\0';
    for (int bit = 0; bit < 64 && used < n; bit++) {
        if (!(reasons & (1ull << bit)))
            continue;
        char other[24];
        const char *name = nvml_reason_name(bit, other);
        int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "", name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}
