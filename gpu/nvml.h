/* nvml.h — the measurement conditions from NVIDIA's management library: clocks,
 * clock-event (throttle) reasons, temperature, power, PCIe link, driver version.
 *
 * libnvidia-ml.so.1 is loaded at run time with dlopen, so the binary starts on
 * machines without it; every function then reports "unavailable" and fills nothing.
 * Plain C: compiled by cc into every build, with or without CUDA. Thread-safe. */
#ifndef STREAMLAB_NVML_H
#define STREAMLAB_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nvml_sample {
    bool valid;                   /* the device was found and read */
    unsigned sm_clock_mhz;        /* current SM clock */
    unsigned mem_clock_mhz;       /* current memory clock */
    unsigned sm_clock_max_mhz;    /* the SM clock's ceiling */
    unsigned long long clock_event_reasons; /* NVML_CLOCKS_EVENT_REASON_* bits, 0: none */
    int temperature_c;            /* GPU core; -1 unknown */
    double power_w;               /* board power draw; < 0 unknown */
    double power_limit_w;         /* enforced limit; < 0 unknown */
    int pstate;                   /* performance state P0..P15; -1 unknown */
    int pcie_gen, pcie_width;     /* current link (may drop when idle); 0 unknown */
    int pcie_gen_max, pcie_width_max; /* what device and slot allow; 0 unknown */
} nvml_sample_t;

/* Load and initialise NVML once. true when it is usable. */
bool nvml_available(void);
/* Why NVML is not usable ("" when it is). */
const char *nvml_status(void);
/* The driver version ("580.159.04") into buf; 0, or -1 when unavailable. */
int nvml_driver_version(char *buf, size_t n);
/* Read the device whose UUID is `uuid` ("GPU-xxxxxxxx-..."); 0 or -1. */
int nvml_sample_read(const char *uuid, nvml_sample_t *out);
/* Names of the set reason bits, comma-separated ("sw_power_cap,hw_slowdown"), "" if none. */
void nvml_reasons_str(unsigned long long reasons, char *buf, size_t n);
/* The same names one by one: reason bit index i (0..63), or "bitN" written into other
 * when the bit has no name. */
const char *nvml_reason_name(int bit, char other[24]);

#ifdef __cplusplus
}
#endif
#endif
