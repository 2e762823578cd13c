# tests/gpu/gpu.mk — the GPU suite's build rules (the Makefile includes this file).
# test_cuda links the core objects (gpu/, db/, the CUDA backend) without the server, so
# it needs neither libmicrohttpd nor a port. `make test-gpu` runs tests/gpu/run.sh,
# which builds $(GPU_TEST_BIN) through this rule and skips cleanly without a GPU.

GPU_TEST_BIN  := $(BUILD)/tests/gpu/test_cuda
GPU_TEST_LIBS := $(filter-out $(MHD_LIBS),$(LDLIBS)) -ljansson -lsqlite3 -lm -ldl -lrt

$(GPU_TEST_BIN): tests/gpu/test_cuda.c $(CORE_OBJ) $(wildcard gpu/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(GPU_TEST_LIBS)

.PHONY: gpu-test-bin
gpu-test-bin: $(GPU_TEST_BIN)
