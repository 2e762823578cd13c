/* sim.h — gpu/'s internal declarations for the simulated device.
 * Only the gpu/ C files include it. */
#ifndef STREAMLAB_SIM_H
#define STREAMLAB_SIM_H

#include "core.h"
#include "profile.h"
#include "model.h"
#include "plan.h"

/* The plan as model input, with each op's alone duration taken from the device's
 * calibration (copies: latency + bytes / bandwidth; kernels: elements x time per element
 * at the fraction of the GPU the launch fills). ops is allocated; free(in->ops). */
int sim_model_input(const spec_t *spec, const plan_t *plan, const device_info_t *dev,
                    model_input_t *in, sl_error_t *err);
/* Replay a plan on the model with dev's calibration, after `warmup` repetitions of it (the
 * device's state carries over, model_simulate_reps): the timeline (caller frees). */
int sim_simulate_plan(const spec_t *spec, const plan_t *plan, const device_info_t *dev, int warmup,
                      timeline_t *tl, sl_error_t *err);
/* Run the plan on the model: every rep's timeline, verified by plan coverage. */
int sim_run(const spec_t *spec, const plan_t *plan, const machine_info_t *m, result_t *out,
            sl_error_t *err);
/* The device a spec runs on in the model: the machine's (with its calibration) or the sim H100. */
void sim_device_for(const machine_info_t *m, const spec_t *spec, int device_index, device_info_t *out);

#endif
