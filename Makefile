# flowtrack front door. `make demo` runs the main job, `make test` runs every test; both install
# their dependencies first (idempotent, Debian 12, root).
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 20
CMAKE_FLAGS ?=

.PHONY: deps build demo test test-release test-asan test-tsan test-fuzz build-fuzz clean

deps:
	@./scripts/install-deps.sh

build: deps
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > /dev/null
	ninja -C build -j $(JOBS)

demo: build
	./scripts/demo.sh build/flowtrack

test: deps test-release test-asan test-tsan test-fuzz
	@echo "make test: all suites passed"

test-release: build
	ctest --test-dir build --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_SANITIZE=address,undefined $(CMAKE_FLAGS) > /dev/null
	ninja -C build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j $(JOBS)

# ThreadSanitizer runs the concurrency stress tests (tests/concurrency) only: everything else is single
# threaded and already covered by the two trees above.
test-tsan: deps
	@if [ -d tests/concurrency ]; then \
	  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_SANITIZE=thread $(CMAKE_FLAGS) > /dev/null && \
	  ninja -C build-tsan -j $(JOBS) test_concurrency && \
	  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan -R '^concurrency$$' --output-on-failure; \
	fi

build-fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_FUZZ=ON -DFLOWTRACK_SANITIZE=address,undefined $(CMAKE_FLAGS) > /dev/null
	ninja -C build-fuzz -j $(JOBS)

# Each fuzzer runs for FUZZ_SECONDS on its seed corpus (copied, so the checked-in corpus stays small);
# `make build-fuzz` and then build-fuzz/<name> fuzz/corpus/<name> runs one for as long as you like.
test-fuzz: build-fuzz
	./scripts/run-fuzzers.sh build-fuzz $(FUZZ_SECONDS)

clean:
	rm -rf build build-asan build-fuzz build-tsan
