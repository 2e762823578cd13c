/* tuned.h — the tuned variant: pick issue order, streams and chunks for a spec by
 * predicting each candidate on the engine-queue model with this machine's calibration. */
#ifndef STREAMLAB_TUNED_H
#define STREAMLAB_TUNED_H

#include <jansson.h>

#include "core.h"

/* Fill *chosen with a concrete spec (variant async_v1 | async_v2 | engine_streams) and
 * *why with {"variant","streams","chunks","predicted_ms","candidates", "reason"}. */
int tuned_choose(const spec_t *spec, const machine_info_t *m, spec_t *chosen, json_t **why,
                 sl_error_t *err);

#endif
