/* sim.h — gpu/'s internal declarations for the simulated device.
 * Only the gpu/ C files include it. */
#ifndef STREAMLAB_SIM_H
#define STREAMLAB_SIM_H

#include "core.h"
#include "profile.h"
#include "model.h"
#include "plan.h"

/* What the sim adds where the lent GPUs show the device waiting between a rep's ops (lent
 * H100s GPU-509a520c, GPU-41f331cf, GPU-6154e87d, 2026-11-27: the plain program under CUPTI and
 * streamlab's own timelines, bench/bench_plain_ops.py). Without them the sim ran 2^20 pipelines
 * 7-18% quick, where the seeds' 2^22 came out right only because the calibration's dirty extra,
 * charged on the array's last H2D, stood in for them.
 *  - SIM_REP_LEAD_US: a rep's first device call costs this much more (model_host_t.lead_us).
 *    streamlab's timelines put a rep's first op 7-12 us after its start event at 2^20 with 2-4
 *    streams and 13-18 us at 2^22 (GPU-55f6fdf7: 12-17), where the sim put it 2.7-3.0 us in.
 *    It is the rep's first calls, made just after the array's memset: under CUPTI's records of
 *    the plain program's runtime calls (GPU-aa1d1036) the start event's record took 6-12 us
 *    (the stop event's 3-4) and the first cudaMemcpyAsync 11.5-19.7 us (the later ones
 *    4.7-7.5; CUPTI slows every call), the H2D starting as it returned. One such call timed
 *    alone by the calibration came out 1-7 us dear (GPU-1ea85f9e); the calibration's own
 *    measure in the seeds' step (calibration_t.rep_lead_us) read 4.4-8.0 us four times in
 *    minutes on one lent H100 (GPU-d39e36c3), and at 4.9 on another (GPU-b112a9b0) it put that
 *    GPU's plain-ops table 2.5% / 10.6% off where 8 gives 1.9% / 9.5%. So the value is the
 *    tables' (6, 8 and 10 tried), and the measure is kept, not used.
 *  - SIM_DEP_GAP_US: an op whose stream predecessor ran on another engine (H2D, kernel, D2H)
 *    starts this long after that op ends (model_op_t.gap_us), beyond its own fixed cost: under
 *    CUPTI the kernels started 4-9 us after their H2D ended and the D2Hs 5-10 us after their
 *    kernel, where the sim had the kernel's 2.5 and the copy's set-up (about 2) only. Its own
 *    stream's op decides, not an awaited event's recorder (engine_streams' ops wait for the
 *    engine before by events, and pay none): charged by the recorder, as the predictor classes
 *    its gaps, the wide tables' engine_streams 2^25 points went from 2.2% off to 2.7% (the
 *    median of 12 runs), so not done.
 *  - PLAN_DIRTY_LARGE_SHARE (plan.h, which prices the dirty extra for the sim and for the
 *    events' copy bound alike): the share of the calibration's dirty extra an H2D itself pays over
 *    an array of 16 MiB and more (all of it up to 4 MiB, in proportion between). The
 *    calibration times the extra by events around the copy. Under CUPTI the last H2D of a 4 MiB
 *    array paid 38 us over its bytes (the calibration: 36), a 16 MiB array's 2, 30 and 31
 *    against the calibrations' 32, 37 and 53 (a median 0.58 of it).
 * Over the lent tables (make bench-sim's, simulated offline): bench/data/wide's 2^20-2^23
 * points went from a median 10.2% quick to 3.7%; the four plain-ops tables' median and largest
 * error from 2.0% / 18.8% to 1.4% / 12.2%; the 46 seeds' tables each from its own calibration
 * from 1.24% to 1.04% (the median of their medians), and from the shipped profiles from 0.92% to
 * 1.06% (49 tables). Held out, a lent H100 measured after the change (GPU-55f6fdf7, 07:33 UTC):
 * its plain-ops table from its own calibration 2.6% / 15.2% -> 2.0% / 7.8%, its seeds' table
 * 3.5% / 14.5% -> 3.1% / 14.7%. */
#define SIM_REP_LEAD_US 8.0
#define SIM_DEP_GAP_US 3.0

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
