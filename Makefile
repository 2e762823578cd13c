# streamlab — build, run and test.
#   make run    build and start the service (127.0.0.1:8080, ./streamlab.db)
#   make test   install what is missing (as root), build, run every suite that can run here
# The CUDA backend is compiled with nvcc when nvcc is found (PATH or /usr/local/cuda/bin);
# without it the binary has the sim and cpu backends only, and says so.

CC       ?= cc
BUILD    ?= build
PYTHON   := /usr/bin/python3
CUDA_HOME ?= /usr/local/cuda
NVCC     ?= $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
# sm_75 (Turing) through sm_120 (Blackwell consumer), plus PTX for what comes next.
CUDA_ARCHS ?= 75 80 86 89 90 100 120
NVCC_GENCODE := $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
                -gencode arch=compute_120,code=compute_120

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes
CFLAGS   ?= -O2 -g
# override: a CFLAGS given on the command line (test-san's -O1) is added to, not replaced;
# without it test-san's objects were compiled without the sanitizers, only linked with them
override CFLAGS += -std=c11 -D_GNU_SOURCE -fopenmp -pthread $(WARN) $(EXTRA_CFLAGS)
LDFLAGS  += -fopenmp -pthread $(EXTRA_LDFLAGS)
# libmicrohttpd is linked statically so that one binary runs on GPU hosts without it.
MHD_LIBS := -Wl,-Bstatic -lmicrohttpd -Wl,-Bdynamic -lgnutls
LDLIBS   += $(MHD_LIBS) -ljansson -lsqlite3 -lm -ldl -lrt

SERVER_SRC := $(wildcard server/*.c)
GPU_SRC    := $(filter-out gpu/cuda_stub.c,$(wildcard gpu/*.c))
DB_SRC     := $(wildcard db/*.c)
CU_SRC     := $(wildcard gpu/*.cu)
include tests/gen.mk

ifneq ($(NVCC),)
  CUDA_OBJ := $(patsubst gpu/%.cu,$(BUILD)/obj/gpu/%.cu.o,$(CU_SRC))
  LDLIBS   += -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++
  override CFLAGS += -DSTREAMLAB_HAVE_CUDA=1
  NVCCFLAGS ?= -O3 -std=c++17 $(NVCC_GENCODE) -Xcompiler -Wall,-Wextra,-fopenmp
else
  CUDA_OBJ := $(BUILD)/obj/gpu/cuda_stub.o
endif

CORE_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(GPU_SRC) $(DB_SRC)) $(BUILD)/obj/gen/migrations.o \
            $(BUILD)/obj/gen/profile.o $(CUDA_OBJ)
SERVER_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(SERVER_SRC))
BIN := $(BUILD)/streamlab

# keep every intermediate object (make would delete them after each test link)
.SECONDARY:

.PHONY: all run test test-data test-unit test-api test-web test-san test-gpu test-crash deps web-vendor clean bench-gpu bench-model replay-model bench-http bench-zero-copy bench-copies bench-host fuzz
all: $(BIN) web-vendor

$(BIN): $(SERVER_OBJ) $(CORE_OBJ)
	@if [ -z "$(NVCC)" ]; then echo "streamlab: nvcc not found: building without the CUDA backend (sim and cpu only)"; fi
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/%.o: %.c $(wildcard server/*.h gpu/*.h db/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/gpu/%.cu.o: gpu/%.cu $(wildcard gpu/*.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

# The migrations and the profiles are embedded in the binary: it needs no files beside it to
# create its store or to simulate a machine (tests/gen.mk).
$(eval $(call gen_rules,$(BUILD),CC,CFLAGS))

# Chart.js from npm, served by the app itself (no CDN).
web-vendor: web/vendor/chart.umd.min.js
web/vendor/chart.umd.min.js: web/package.json
	@mkdir -p web/vendor
	cd web && (timeout 300 npm ci --no-audit --no-fund --silent 2>/dev/null || timeout 300 npm install --no-audit --no-fund --silent)
	cp web/node_modules/chart.js/dist/chart.umd.min.js $@

deps:
	@sh tests/deps.sh

run: deps all
	$(BIN) serve

# ---- tests ----
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

UNIT_LINK := $(filter-out $(BUILD)/obj/server/main.o,$(SERVER_OBJ)) $(CORE_OBJ)
$(BUILD)/tests/%: tests/unit/%.c tests/unit/check.h $(UNIT_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(UNIT_LINK) $(LDLIBS)

# the shipped profiles' fleets (bench/fleet.py) are the tables bench/data keeps
test-data:
	@$(PYTHON) bench/fleet.py --check && echo "data: the profiles' fleets are bench/data's tables"

test-unit: $(UNIT_BIN)
	@sh tests/run_unit.sh $(UNIT_BIN)

test-api: $(BIN)
	@STREAMLAB_BIN=$(abspath $(BIN)) sh tests/run_api.sh

test-web: all
	@STREAMLAB_BIN=$(abspath $(BIN)) sh tests/web/run.sh

# The unit and API suites again, built with AddressSanitizer and UBSan.
test-san:
	@$(MAKE) --no-print-directory BUILD=build/san NVCC= \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" CFLAGS="-O1 -g" SUITE_PREFIX=asan- test-unit test-api

test: deps all
	@$(MAKE) --no-print-directory test-data
	@$(MAKE) --no-print-directory test-unit
	@$(MAKE) --no-print-directory test-api
	@$(MAKE) --no-print-directory test-crash
	@$(MAKE) --no-print-directory test-san
	@$(MAKE) --no-print-directory test-web
	@$(MAKE) --no-print-directory fuzz-ci

# kill -9 at random moments while runs write their events, then restart: nothing lost
test-crash: $(BIN)
	@STREAMLAB_BIN=$(abspath $(BIN)) sh tests/crash/run.sh

test-gpu: $(BIN)
	@STREAMLAB_BIN=$(abspath $(BIN)) sh tests/gpu/run.sh

clean:
	rm -rf $(BUILD)

# the GPU suite's and the GPU benchmark's rules; the fuzzers (make fuzz, make fuzz-ci)
-include tests/gpu/gpu.mk bench/bench.mk tests/fuzz/fuzz.mk

# JSON reads under wrk while a sweep runs, beside nginx serving the same bytes (a benchmark)
bench-http: $(BIN)
	@sh bench/bench_http.sh $(BIN)

# the model's accuracy on this machine (a benchmark, not a test)
bench-model: $(BIN)
	@sh bench/bench_model.sh $(BIN)

# a database's recorded predictions replayed on this machine (no GPU needed), e.g. a
# bench-model run's build/bench/model.db: make replay-model DB=... [OVERRIDES='{"device": {...}}']
replay-model: $(BIN)
	@sh bench/replay_model.sh $(BIN) "$(DB)" '$(or $(OVERRIDES),{})'

# the README's picture: the dashboard's Compare view of the example results (examples/),
# rendered by headless Chromium into docs/compare.png (tests/web/screenshot.mjs)
.PHONY: screenshot
screenshot: all
	@[ -d tests/web/node_modules/puppeteer-core ] || (cd tests/web && npm ci --no-audit --no-fund --silent)
	@STREAMLAB_BIN=$(abspath $(BIN)) node tests/web/screenshot.mjs docs/compare.png
