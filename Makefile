# culeak — see README.md. `make` builds into build/; `make check` installs deps and runs every test.
CC       ?= cc
PREFIX   ?= /usr/local
BUILD    := build
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror=implicit-function-declaration -Iinspector
LDLIBS   := -ldw -lelf
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRC  := $(shell find inspector -name '*.c' ! -path 'inspector/cli/*' | sort)
CLI_SRC  := $(wildcard inspector/cli/*.c)
UNIT_SRC := $(shell find tests/unit -name '*_test.c' | sort)
HDRS     := $(shell find inspector -name '*.h')

LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB_SAN_OBJ := $(LIB_SRC:%.c=$(BUILD)/san/%.o)

.PHONY: all install demo check test-unit test-unit-san test-integration deps clean
all: $(BUILD)/culeak

$(BUILD)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/san/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -c $< -o $@

$(BUILD)/libculeak.a: $(LIB_OBJ)
	ar rcs $@ $^
$(BUILD)/libculeak-san.a: $(LIB_SAN_OBJ)
	ar rcs $@ $^

$(BUILD)/culeak: $(CLI_SRC) $(BUILD)/libculeak.a $(HDRS)
	$(CC) $(CFLAGS) $(CLI_SRC) $(BUILD)/libculeak.a $(LDLIBS) -o $@

# Unit tests: one CUnit binary, plain and under AddressSanitizer + UndefinedBehaviorSanitizer.
$(BUILD)/unit_tests: $(UNIT_SRC) tests/unit/main.c $(BUILD)/libculeak.a
	$(CC) $(CFLAGS) -Itests/unit $(UNIT_SRC) tests/unit/main.c $(BUILD)/libculeak.a $(LDLIBS) -lcunit -o $@
$(BUILD)/unit_tests_san: $(UNIT_SRC) tests/unit/main.c $(BUILD)/libculeak-san.a
	$(CC) $(CFLAGS) $(SANFLAGS) -Itests/unit $(UNIT_SRC) tests/unit/main.c $(BUILD)/libculeak-san.a $(LDLIBS) -lcunit -o $@

deps:
	scripts/install-deps

install: $(BUILD)/culeak
	install -D -m 755 $(BUILD)/culeak $(DESTDIR)$(PREFIX)/bin/culeak

demo: deps all
	scripts/demo

test-unit: $(BUILD)/unit_tests
	$(BUILD)/unit_tests
test-unit-san: $(BUILD)/unit_tests_san
	$(BUILD)/unit_tests_san
test-integration: $(BUILD)/culeak
	/usr/bin/python3 tests/integration/run.py

check: deps
	$(MAKE) all $(BUILD)/unit_tests $(BUILD)/unit_tests_san
	scripts/run-tests

clean:
	rm -rf $(BUILD)/obj $(BUILD)/san $(BUILD)/*.a $(BUILD)/culeak $(BUILD)/unit_tests*
