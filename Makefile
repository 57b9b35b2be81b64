# flowtrack front door. `make demo` runs the main job, `make test` runs every test; both install
# their dependencies first (idempotent, Debian 12, root).
#
# `make test` builds and runs four trees, one after the other, each phase timed (the table at the end):
#   build/       release, the whole CLI grid (FLOWTRACK_GRID=full): every test
#   build-asan/  ASan+UBSan, the representative grid: every test
#   build-tsan/  ThreadSanitizer: the concurrency tests (tests/concurrency), the only multi-threaded ones
#   build-fuzz/  clang + libFuzzer + ASan/UBSan: every fuzzer for FUZZ_SECONDS on its seed corpus
# Every tree is built with -Werror: a new warning fails the build.
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 20
CMAKE_FLAGS ?=
PHASE := ./scripts/phase.sh
CONFIGURE = cmake -S . -G Ninja -DFLOWTRACK_WERROR=ON $(CMAKE_FLAGS)

.PHONY: deps build demo test test-release test-asan test-tsan test-fuzz build-fuzz clean

deps:
	@./scripts/install-deps.sh

build: deps
	$(CONFIGURE) -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
	ninja -C build -j $(JOBS)

demo: build
	./scripts/demo.sh build/flowtrack

test: deps
	@$(PHASE) --reset
	@$(MAKE) --no-print-directory test-release test-asan test-tsan test-fuzz || { $(PHASE) --report; exit 1; }
	@$(PHASE) --report
	@echo "make test: all suites passed"

test-release: deps
	$(CONFIGURE) -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
	$(PHASE) release-build ninja -C build -j $(JOBS)
	$(PHASE) release-tests ctest --test-dir build --output-on-failure -j $(JOBS)

test-asan: deps
	$(CONFIGURE) -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_SANITIZE=address,undefined > /dev/null
	$(PHASE) asan-build ninja -C build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(PHASE) asan-tests ctest --test-dir build-asan --output-on-failure -j $(JOBS)

# ThreadSanitizer runs the concurrency stress tests (tests/concurrency) only: everything else is single
# threaded and already covered by the two trees above.
test-tsan: deps
	$(CONFIGURE) -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_SANITIZE=thread > /dev/null
	$(PHASE) tsan-build ninja -C build-tsan -j $(JOBS) test_concurrency
	TSAN_OPTIONS=halt_on_error=1 $(PHASE) tsan-tests ctest --test-dir build-tsan -R '^concurrency$$' --output-on-failure

build-fuzz: deps
	CC=clang CXX=clang++ $(CONFIGURE) -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_FUZZ=ON \
	  -DFLOWTRACK_SANITIZE=address,undefined > /dev/null
	$(PHASE) fuzz-build ninja -C build-fuzz -j $(JOBS) fuzzers

# Each fuzzer runs for FUZZ_SECONDS on its seed corpus (copied, so the checked-in corpus stays small);
# `make build-fuzz` and then build-fuzz/<name> fuzz/corpus/<name> runs one for as long as you like.
test-fuzz: build-fuzz
	$(PHASE) fuzz-runs ./scripts/run-fuzzers.sh build-fuzz $(FUZZ_SECONDS)

clean:
	rm -rf build build-asan build-fuzz build-tsan .phase-times
