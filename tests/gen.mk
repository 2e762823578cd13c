# gen.mk — the sources generated from data and embedded in every binary: the store's
# migrations and the machine profiles (the first is the simulated device every GPU-less
# user sees, measured on a lent H100; the others can be simulated by name). Included by
# the Makefile and by tests/fuzz/fuzz.mk, whether that runs alone or from the Makefile.
ifndef GEN_MK_INCLUDED
GEN_MK_INCLUDED := 1

MIGRATIONS := $(sort $(wildcard migrations/*.sql))
DEFAULT_PROFILE := profiles/h100.json
PROFILES := $(DEFAULT_PROFILE) $(filter-out $(DEFAULT_PROFILE),$(sort $(wildcard profiles/*.json)))

# $(eval $(call gen_rules,DIR,CC_VAR,CFLAGS_VAR)): DIR/gen/migrations.c and DIR/gen/profile.c,
# compiled into DIR/obj/gen/*.o by the compiler and flags the two variables name.
define gen_rules
$(1)/gen/migrations.c: $$(MIGRATIONS) tests/gen_migrations.sh
	@mkdir -p $$(dir $$@)
	sh tests/gen_migrations.sh $$(MIGRATIONS) > $$@

$(1)/obj/gen/migrations.o: $(1)/gen/migrations.c
	@mkdir -p $$(dir $$@)
	$$($(2)) $$($(3)) -Idb -c -o $$@ $$<

$(1)/gen/profile.c: $$(PROFILES) tests/gen_profile.sh
	@mkdir -p $$(dir $$@)
	sh tests/gen_profile.sh $$(PROFILES) > $$@

$(1)/obj/gen/profile.o: $(1)/gen/profile.c gpu/profile.h
	@mkdir -p $$(dir $$@)
	$$($(2)) $$($(3)) -Igpu -c -o $$@ $$<
endef
endif
