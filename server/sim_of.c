/* sim_of.c — simulating a machine the store knows (see sim_of.h). The embedded profiles
 * (the lent H100 and H200, measured there) become machines of every store at start-up,
 * so that a GPU-less user can simulate them; a spec's sim_of names one of those, or any
 * machine an import or a push brought, and runs on the sim from that machine's
 * calibration. Nothing here runs anything: the checks and the runs are gpu/'s. */
#include "sim_of.h"

#include <stdio.h>
#include <string.h>

void sim_of_profiles_load(app_t *app) {
    app->profiles = json_object();
    if (!app->profiles) {
        fprintf(stderr, "streamlab: out of memory loading the machine profiles\n");
        return;
    }
    for (int i = 0; i < profile_count(); i++) {
        const json_t *meta;
        const machine_info_t *m;
        if (profile_embedded(i, &meta, &m))
            continue; /* profile.c said why */
        if (json_object_set(app->profiles, m->id, (json_t *)meta))
            fprintf(stderr, "streamlab: out of memory keeping embedded profile %d\n", i);
    }
}

void sim_of_profiles_store(app_t *app, store_t *store) {
    for (int i = 0; i < profile_count(); i++) {
        const json_t *meta;
        const machine_info_t *m;
        sl_error_t err = {0};
        if (profile_embedded(i, &meta, &m) == 0 && json_object_get(app->profiles, m->id) &&
            store_upsert_machine(store, m, &err))
            fprintf(stderr, "streamlab: storing embedded profile machine %s failed: %s\n", m->id, err.message);
    }
}

void sim_of_profiles_free(app_t *app) {
    json_decref(app->profiles);
    app->profiles = NULL;
}

const machine_info_t *sim_of_machine(app_t *app, store_t *store, const spec_t *spec, machine_info_t *sim,
                                     sl_error_t *err) {
    if (!spec->sim_of[0])
        return &app->machine;
    if (sim->backend == BACKEND_SIM && strcmp(sim->id, spec->sim_of) == 0)
        return sim;
    sl_error_t e = {0};
    json_t *m = store_machine_json(store, spec->sim_of, &e);
    if (!m) {
        if (e.code == SL_E_NOTFOUND)
            sl_error_set(err, SL_E_INVALID, "sim_of", "no machine %s in this store (GET /api/machines lists them)",
                         spec->sim_of);
        else if (err)
            *err = e;
        return NULL;
    }
    int rc = profile_sim_of(m, sim, &e);
    json_decref(m);
    if (rc) {
        memset(sim, 0, sizeof *sim); /* nothing half-filled is reused */
        sl_error_set(err, SL_E_INVALID, "sim_of", "machine %s cannot be simulated: %.400s", spec->sim_of, e.message);
        return NULL;
    }
    /* the id is what a later spec naming the same machine reuses it by */
    snprintf(sim->id, sizeof sim->id, "%s", spec->sim_of);
    return sim;
}

int sim_of_check(app_t *app, store_t *store, const spec_t *spec, machine_info_t *sim, sl_error_t *err) {
    const machine_info_t *m = sim_of_machine(app, store, spec, sim, err);
    if (!m)
        return err ? (int)err->code : SL_E_INVALID;
    return backend_check(spec, m, err);
}

void sim_of_annotate(const app_t *app, json_t *m) {
    machine_info_t parsed;
    sl_error_t err = {0};
    json_object_set_new(m, "simulatable", json_boolean(machine_from_json(m, &parsed, &err) == SL_OK));
    const char *id = json_string_value(json_object_get(m, "id"));
    json_t *meta = id ? json_object_get(app->profiles, id) : NULL;
    if (meta) /* a copy: the loaded profiles are shared by every thread and never change */
        json_object_set_new(m, "profile", json_deep_copy(meta));
    else
        json_object_del(m, "profile");
}
