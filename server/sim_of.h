/* sim_of.h — simulating a machine the store knows (spec "sim_of"): the machine a spec
 * runs against, the embedded machine profiles (gpu/profile.h) loaded at start-up and put
 * into the store, and what /api/machines adds to each machine (simulatable, profile). */
#ifndef STREAMLAB_SIM_OF_H
#define STREAMLAB_SIM_OF_H

#include "app.h"

/* The embedded profiles (gpu/profile.h, parsed once for the process) into app->profiles
 * (machine id -> the profile's "profile" metadata); one that does not load is logged and
 * left out. Never fails. */
void sim_of_profiles_load(app_t *app);
/* Upsert the machine of every profile in app->profiles into the store (logged where one fails). */
void sim_of_profiles_store(app_t *app, store_t *store);
void sim_of_profiles_free(app_t *app);

/* The machine spec runs against: this machine, or (spec->sim_of) the store's machine of
 * that id as the model stands in for it, filled into *sim. A *sim that already holds that
 * machine is reused (callers checking many specs keep one; zero it before the first).
 * NULL with SL_E_INVALID naming "sim_of" when the store does not know the machine or the
 * model cannot stand in for it (another code where the store fails). */
const machine_info_t *sim_of_machine(app_t *app, store_t *store, const spec_t *spec, machine_info_t *sim,
                                     sl_error_t *err);
/* sim_of_machine, then backend_check against that machine: what every submit asks
 * before anything is stored. */
int sim_of_check(app_t *app, store_t *store, const spec_t *spec, machine_info_t *sim, sl_error_t *err);

/* A machine as /api/machines and bundles show it (m from the store, changed in place):
 * "simulatable" (the model can stand in for it) and, for a machine an embedded profile
 * describes, "profile" (that profile's metadata). */
void sim_of_annotate(const app_t *app, json_t *m);

#endif
