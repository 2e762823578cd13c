/* support.c — code the unit tests share, linked into each of them (the Makefile's
 * UNIT_LINK) and into the fuzzers (tests/fuzz/fuzz.mk). Empty for now: app_store and
 * app_new_id, which the handlers call, come from server/app.c, linked like every other
 * server object but main.c. */
