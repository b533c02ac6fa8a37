# Thin wrapper around CMake. Every target installs what is missing first.
#   make build   release build in build/
#   make demo    build, then fly the demo mission in the simulator
#   make test    release + ASan/UBSan builds, every test, a short fuzz run
#   make bench   benchmarks (tests/bench), results in build/bench.json (the test
#                setup installs the tokenizer bench_tokens counts with)
#   make fuzz    long fuzzing run (FUZZ_SECONDS, default 600)
#   make coverage  gcov/lcov report in build-cov/coverage/ (safety files >= 95 % branches)
#   make mutate  every mutant of tests/mutants.json against its tests
#                (make test runs a sample of MUTATE_SAMPLE, seeded by the commit)
#   make install   the binary to $(PREFIX)/bin, the examples to
#                $(PREFIX)/share/aloft (PREFIX=/usr/local; DESTDIR honoured)
#   make format-check  fails when a C file is not clang-formatted (make test runs it)

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 600
FUZZ_SHORT_SECONDS ?= 60
MUTATE_SAMPLE ?= 8
MUTATE_SEED ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo 1)
PREFIX ?= /usr/local
C_SOURCES = $(shell git ls-files '*.c' '*.h' '*.cpp' '*.hpp' 2>/dev/null)

.PHONY: all build demo test bench fuzz mutate coverage setup setup-test clean format \
	format-check install

all: build

setup:
	@scripts/setup.sh

setup-test:
	@scripts/setup.sh --test

build: setup
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build build -j $(JOBS) -- --no-print-directory

build-asan: setup-test
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DALOFT_SANITIZE=ON >/dev/null
	cmake --build build-asan -j $(JOBS) -- --no-print-directory

build-fuzz: setup-test
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DALOFT_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target fuzzers

# The demo's own output is what a person should see: the build goes to a log,
# shown only when it fails.
demo: setup
	@mkdir -p build
	@echo "demo: building aloft (log: build/build.log)"
	@$(MAKE) --no-print-directory build >build/build.log 2>&1 || \
		{ tail -n 30 build/build.log; echo "demo: the build failed; see build/build.log"; exit 1; }
	@scripts/demo.sh

install: build
	cmake --install build --prefix "$(PREFIX)"

format-check: setup-test
	@clang-format --dry-run -Werror $(C_SOURCES) || \
		{ echo "format-check: run 'make format' and commit the result"; exit 1; }

test: setup-test format-check build build-asan
	cd build && ctest --output-on-failure -j $$(( 2 * $(JOBS) ))
	# the vehicle emulator's own test has no C of ours to sanitize, and the lossy
	# missions fly the driver's code that test_mavlink_fly already runs sanitized:
	# once each, in the release build, is enough
	cd build-asan && ctest --output-on-failure -j $$(( 2 * $(JOBS) )) -E '^test_mavlink_(emu|loss)$$'
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SHORT_SECONDS)
	scripts/mutate.py --sample $(MUTATE_SAMPLE) --seed $(MUTATE_SEED)

bench: setup-test build
	scripts/bench.sh

coverage: setup-test
	scripts/coverage.sh

mutate: setup-test
	scripts/mutate.py

fuzz: build-fuzz
	scripts/fuzz.sh $(FUZZ_SECONDS)

format:
	clang-format -i $(C_SOURCES)

clean:
	rm -rf build build-asan build-fuzz build-mutate
