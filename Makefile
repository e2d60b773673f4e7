# dlperf — build libdlperf (static + shared), the CLI and the tests.
#   make            library + CLI in build/
#   make test       build and run every test (build/)
#   make SAN=1 test the same under AddressSanitizer + UBSan (build-san/)
#   make fuzz       libFuzzer harness for the ONNX reader (clang)
#   make devbench   CUDA microbenchmark (skipped without nvcc)
#   make models     retrain the shipped predictors from data/
CC      ?= cc
SAN     ?= 0
ifeq ($(SAN),1)
BUILD   ?= build-san
OPT     ?= -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
else
BUILD   ?= build
OPT     ?= -O2 $(VECT)
endif
# GCC vectorizes at -O2 only loops that need neither a run-time alias check
# nor a remainder loop; the network's row loops (SAGE aggregation, batch
# norm, ReLU) need both. The dynamic cost model vectorizes them: elementwise
# float code, so no result changes (no reassociation; no contraction in ISO
# C mode), and the 2,000-node transformer prediction runs 92 -> 73 M
# instructions. Left out where the compiler does not take the flag.
VECT    := $(shell $(CC) -fvect-cost-model=dynamic -Werror -x c -c -o /dev/null /dev/null 2>/dev/null && echo -fvect-cost-model=dynamic)

PKGS      := openblas libcjson libzstd zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# OpenBLAS: headers only; src/nn/nn_blas.c opens it with dlopen on first use,
# first $(BUILD)/libdlperf_blas.so where OpenBLAS's static archive exists: the
# same OpenBLAS (same kernels, same results) relinked with its internal
# symbols bound at link time and only the three entry points of
# src/nn/nn_blas.map exported. Opening the system libopenblas.so.0 resolves
# ~14,000 symbolic relocations (its per-CPU kernel tables) in every process
# that runs a network: ~4 ms of a 13 ms ResNet-50 `dlperf predict`; the
# private copy opens in ~0.4 ms. Without the archive the system library runs.
BLAS_DIR := $(patsubst %/,%,$(shell pkg-config --variable=libdir openblas 2>/dev/null))
BLAS_A  := $(wildcard $(BLAS_DIR)/libopenblas.a)
BLAS_SO := $(if $(BLAS_A),$(BUILD)/libdlperf_blas.so)
PKG_LIBS   := $(shell pkg-config --libs libcjson libzstd zlib liblzma 2>/dev/null || echo -lcjson -lzstd -lz -llzma)
XGB_LIBS   := $(shell test -e /usr/include/xgboost/c_api.h && echo -lxgboost)
LIBS    := $(PKG_LIBS) $(XGB_LIBS) -lm -lpthread
# The CLI takes the compression libraries (the dataset's tar.zst / tar.xz
# packs; a prediction never calls them) from their static archives where
# the -dev packages ship them: each shared one costs every process its
# loading (mapping, relocations, page faults at ~14 us on the project's
# VM): a ResNet-50 `dlperf predict` takes 114 page faults instead of 134,
# 9.77 ms median instead of 9.90 (bench/predict_interleaved.py, 100
# repetitions; docs/PREDICT.md, "Speed, ninety-second session"). The
# library (libdlperf.so) and the tests link them shared.
STATIC_A := $(foreach l,zstd z lzma,$(filter /%,$(shell $(CC) -print-file-name=lib$(l).a)))
CLI_LIBS := $(if $(word 3,$(STATIC_A)),$(filter-out -lzstd -lz -llzma,$(PKG_LIBS)) $(STATIC_A) $(XGB_LIBS) -lm -lpthread,$(LIBS))

CFLAGS  += -std=c11 -g $(OPT) -Wall -Wextra -D_GNU_SOURCE -fPIC \
           -Iinclude -Isrc $(PKG_CFLAGS) -MMD -MP
LDFLAGS += $(OPT)

LIB_SRC := $(sort $(filter-out src/cli/%,$(wildcard src/*/*.c)))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all test clean fuzz info devbench
all: info $(BUILD)/libdlperf.a $(BUILD)/libdlperf.so $(BUILD)/dlperf $(BLAS_SO)

info:
	@echo "dlperf: CC=$(CC) BUILD=$(BUILD) SAN=$(SAN) libs: $(LIBS) cli: $(CLI_LIBS) blas: $(or $(BLAS_SO),system libopenblas)"

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libdlperf.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libdlperf.so: $(LIB_OBJ)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/dlperf: $(CLI_OBJ) $(BUILD)/libdlperf.a | $(BLAS_SO)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libdlperf.a $(CLI_LIBS)

$(BUILD)/obj/src/nn/nn_blas.o: CFLAGS += $(if $(BLAS_SO),-DDLP_BLAS_PRIVATE='"$(abspath $(BLAS_SO))"')
# test_nn_blas compares the private copy with the shared build of the same
# archive, bit for bit
$(BUILD)/tests/test_nn_blas: CFLAGS += $(if $(BLAS_SO),-DDLP_BLAS_SHARED='"$(BLAS_DIR)/libopenblas.so.0"')

# The private OpenBLAS (see BLAS_SO above); -u pulls the entry points out of
# the archive, the version script hides everything else.
$(BUILD)/libdlperf_blas.so: $(BLAS_A) src/nn/nn_blas.map
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ -Wl,--version-script=src/nn/nn_blas.map \
	  -Wl,-u,cblas_sgemm -Wl,-u,cblas_dgemm \
	  -Wl,-u,openblas_set_num_threads $(BLAS_A) -lm -lpthread

$(BUILD)/tests/%: tests/%.c tests/check.h tests/roofline_file.h $(BUILD)/libdlperf.a | $(BLAS_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libdlperf.a $(LIBS)

test: all $(TEST_BIN)
	@BUILD=$(BUILD) scripts/run_tests.sh

fuzz: $(LIB_SRC) tests/fuzz_onnx.c
	@mkdir -p build-fuzz
	clang -std=c11 -g -O1 -D_GNU_SOURCE -Iinclude -Isrc $(PKG_CFLAGS) \
	  -fsanitize=fuzzer,address,undefined -o build-fuzz/fuzz_onnx \
	  tests/fuzz_onnx.c $(LIB_SRC) $(LIBS)

# CUDA device microbenchmark (tools/devbench): built only where nvcc exists.
devbench:
	$(MAKE) -C tools/devbench

clean:
	rm -rf build build-san build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

# Retrain the shipped predictors in models/ from data/ (scripts/train_models.sh).
.PHONY: models
models: all
	scripts/train_models.sh
