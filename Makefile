# SPDX-License-Identifier: MIT
# The whole vocabulary of the build (STYLE.md): CMake + ctest underneath.
#   make            build build/lib/libobc.{so,a}, build/bin/obcrun, build/bin/obc-perf
#   make test       build and run every test (ctest, all labels)
#   make demo       a 4-rank broadcast on this host
#   make asan|tsan  the multi-process tests under ASan+UBSan / TSan (own build dirs)
#   make clang      everything built with clang (-Werror), unit, integration and fuzz tests run
#   make check      format, layering and getenv rules
#   make install PREFIX=/usr/local
#   make bench      the benchmark of docs/perf (long)
PREFIX ?= /usr/local
JOBS ?= 2
# ctest's slots: two per CPU (tests/CMakeLists.txt, "Slots", says why).
TEST_JOBS ?= $(shell echo $$((2 * $(JOBS))))
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
CTEST_FLAGS ?= --output-on-failure --timeout 900 -j$(TEST_JOBS)

.PHONY: all build test demo asan tsan clang check install bench clean

all: build

build:
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null
	@cmake --build build -j$(JOBS)

test: build
	cd build && ctest $(CTEST_FLAGS)

demo: build
	build/bin/obcrun -n 4 build/bin/obc-demo-broadcast

# Sanitizer builds run the unit tests and a chosen subset of the multi-process
# suites (the "san" lines of tests/*/*.c: every mechanism once, see
# tests/README.md) with a reduced size list (OBCT_QUICK) and stretched
# timeouts; sizes and shapes are what the normal build sweeps.
SAN_LABELS ?= unit|coll|variant|fault|integration
asan:
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DOBC_SANITIZE=address \
	    -DOBC_TEST_TIMEOUT_MULTIPLIER=5 >/dev/null
	@cmake --build build-asan -j$(JOBS)
	cd build-asan && OBCT_QUICK=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest $(CTEST_FLAGS) -L '$(SAN_LABELS)'

tsan:
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DOBC_SANITIZE=thread \
	    -DOBC_TEST_TIMEOUT_MULTIPLIER=5 >/dev/null
	@cmake --build build-tsan -j$(JOBS)
	cd build-tsan && OBCT_QUICK=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	    ctest $(CTEST_FLAGS) -L '$(SAN_LABELS)'

# The second compiler: its warnings differ from gcc's (e.g. fallthrough comments).
# It also builds the libFuzzer targets and runs each for a bounded time (label fuzz).
clang:
	@CC=clang cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null
	@cmake --build build-clang -j$(JOBS)
	cd build-clang && ctest $(CTEST_FLAGS) -L 'unit|integration|fuzz'

check:
	tools/check.sh

install: build
	cmake --install build --prefix $(PREFIX)

bench: build
	bench/run_bench.sh

clean:
	rm -rf build build-asan build-tsan build-clang
