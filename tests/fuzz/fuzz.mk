# fuzz.mk — libFuzzer harnesses (clang from Debian) for the parsers that take bytes
# from the network: the spec parser, the predict trace parser, the bundle importer and
# the HTTP layer (router, limits, auth, static files) driven over a real socket.
#
#   make -f tests/fuzz/fuzz.mk fuzz      each harness for FUZZ_SECONDS (default 60)
#   make -f tests/fuzz/fuzz.mk fuzz-ci   each briefly (FUZZ_CI_SECONDS, default 15), then
#                                        every input in tests/fuzz/crashes/ as a regression
#   (or `include tests/fuzz/fuzz.mk` from the Makefile and `make fuzz`)
#
# Every harness links the project's own sources, built again here with
# -fsanitize=fuzzer-no-link,address,undefined: server/*.c but main.c, db/*.c, gpu/*.c
# (the CUDA stub included; server/app.c gives app_store and app_new_id) and the embedded
# migrations and profiles. New corpus entries go to
# $(FUZZ_BUILD)/corpus/<harness>; the seeds in tests/fuzz/corpus/<harness> are read,
# never written. A crash leaves its input in
# $(FUZZ_BUILD)/artifacts/; keep it as tests/fuzz/crashes/<harness>-<short-name>.

FUZZ_CC         ?= clang
FUZZ_BUILD      ?= build/fuzz
FUZZ_SECONDS    ?= 60
FUZZ_CI_SECONDS ?= 15
# per-input limit (s): a parser that takes longer on one request is a finding too
FUZZ_TIMEOUT    ?= 10
FUZZ_RSS_MB     ?= 2048
FUZZ_JOBS_ARGS  ?=

FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -std=c11 -D_GNU_SOURCE -fopenmp -pthread \
               -Wall -Wno-unknown-pragmas $(FUZZ_SAN)
FUZZ_LDLIBS := -Wl,-Bstatic -lmicrohttpd -Wl,-Bdynamic -lgnutls -ljansson -lsqlite3 -lm -ldl -lrt

FUZZ_SRC := $(filter-out server/main.c,$(wildcard server/*.c)) $(wildcard db/*.c) $(wildcard gpu/*.c)
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_SRC)) $(FUZZ_BUILD)/obj/gen/migrations.o \
            $(FUZZ_BUILD)/obj/gen/profile.o
FUZZ_HDR := $(wildcard server/*.h db/*.h gpu/*.h) tests/fuzz/fuzz_util.h

# the bundle importer is fuzzed only where it exists
FUZZ_NAMES := fuzz_spec fuzz_trace fuzz_router $(if $(wildcard db/bundle.h),fuzz_bundle)
FUZZ_BINS  := $(addprefix $(FUZZ_BUILD)/,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-ci fuzz-build fuzz-regress $(addprefix fuzz-run-,$(FUZZ_NAMES))

fuzz-build: $(FUZZ_BINS)

# the objects are made by a pattern rule for a pattern rule: keep them between runs
.SECONDARY: $(FUZZ_OBJ) $(FUZZ_BUILD)/gen/migrations.c $(FUZZ_BUILD)/gen/profile.c

$(FUZZ_BUILD)/obj/%.o: %.c $(FUZZ_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# the embedded migrations and profiles (tests/gen.mk), compiled with the fuzz flags
include tests/gen.mk
$(eval $(call gen_rules,$(FUZZ_BUILD),FUZZ_CC,FUZZ_CFLAGS))

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) $(FUZZ_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(FUZZ_LDLIBS)

# one harness for $(1) seconds: new inputs into the build's corpus, seeds read-only
define fuzz_run
	@mkdir -p $(FUZZ_BUILD)/corpus/$(2) $(FUZZ_BUILD)/artifacts
	@echo "fuzz: $(2) for $(1) s"
	@$(FUZZ_BUILD)/$(2) -max_total_time=$(1) -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=$(FUZZ_RSS_MB) \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/$(2)- \
	  $(if $(wildcard tests/fuzz/$(2).dict),-dict=tests/fuzz/$(2).dict) $(FUZZ_JOBS_ARGS) \
	  $(FUZZ_BUILD)/corpus/$(2) tests/fuzz/corpus/$(2) 2>$(FUZZ_BUILD)/$(2).log; \
	  rc=$$?; grep -a -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|^#[0-9]+ *DONE' $(FUZZ_BUILD)/$(2).log; \
	  if [ $$rc -ne 0 ]; then grep -a -E -A3 'FINDING|ERROR|SUMMARY|runtime error' $(FUZZ_BUILD)/$(2).log | head -40; echo "fuzz: $(2) FAILED (log $(FUZZ_BUILD)/$(2).log)"; exit 1; fi
endef

fuzz: $(FUZZ_BINS)
	@fail=0; for h in $(FUZZ_NAMES); do $(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk fuzz-run-$$h \
	  FUZZ_RUN_SECONDS=$(FUZZ_SECONDS) || fail=$$((fail+1)); done; \
	  echo "fuzz: $$(( $(words $(FUZZ_NAMES)) - fail )) passed, $$fail failed"; [ $$fail -eq 0 ]

fuzz-ci: $(FUZZ_BINS)
	@fail=0; for h in $(FUZZ_NAMES); do $(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk fuzz-run-$$h \
	  FUZZ_RUN_SECONDS=$(FUZZ_CI_SECONDS) || fail=$$((fail+1)); done; \
	  $(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk fuzz-regress || fail=$$((fail+1)); \
	  echo "fuzz-ci: $$(( $(words $(FUZZ_NAMES)) + 1 - fail )) passed, $$fail failed"; [ $$fail -eq 0 ]

FUZZ_RUN_SECONDS ?= $(FUZZ_SECONDS)
$(addprefix fuzz-run-,$(FUZZ_NAMES)): fuzz-run-%: $(FUZZ_BUILD)/%
	$(call fuzz_run,$(FUZZ_RUN_SECONDS),$*)

# Every kept crash input, replayed once by its harness (named by the file's prefix).
fuzz-regress: $(FUZZ_BINS)
	@pass=0; fail=0; for f in tests/fuzz/crashes/*; do [ -f "$$f" ] || continue; \
	  h=$$(basename "$$f" | sed 's/-.*//'); \
	  if [ ! -x $(FUZZ_BUILD)/$$h ]; then echo "fuzz-regress: $$f: no harness $$h"; fail=$$((fail+1)); continue; fi; \
	  if $(FUZZ_BUILD)/$$h -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=$(FUZZ_RSS_MB) "$$f" >$(FUZZ_BUILD)/regress.log 2>&1; \
	  then pass=$$((pass+1)); else fail=$$((fail+1)); echo "fuzz-regress: FAIL $$f"; \
	  grep -a -E 'FINDING|SUMMARY|runtime error' $(FUZZ_BUILD)/regress.log | head -3; fi; done; \
	  echo "fuzz-regress: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]
