# flowtrack front door. `make demo` runs the main job, `make test` runs every test; both install
# their dependencies first (idempotent, Debian 12, root).
#
# `make test` builds three trees, then runs every test, each phase timed in wall and CPU seconds (the
# table at the end): the release tree, then the two sanitizer trees side by side (each build ended on
# one long compile with a core idle: a clean clone's ninja logs, 14 s of the ASan tree's 274, 41 of the
# TSan tree's 171), then the live scenarios beside all the other tests (the `test` target says how;
# never beside a build: at nice 19 beside one, three of the two-worker live scenarios failed;
# docs/performance/build-ci.md). The trees:
#   build/       release: the CLI, the live scenarios, the installed package's consumer, the lab's tests,
#                and the unit tests whose code the release build shapes (RELEASE_TEST_DIRS: per-instruction-
#                set forms, full-speed concurrency, the optimized CLI; tests/CMakeLists.txt says why). The
#                CLI's grid is the representative one here (the tables the tests drive; every table still
#                passes the conformance suite): the whole grid, which `make build` and `make demo` compile,
#                took a third of the suite's time. A later `make build` recompiles the grid's files and
#                builds every test.
#   build-asan/  clang, ASan+UBSan: the library and its layers' tests (not the CLI and its command-line
#                tests, not the concurrency tests: ASAN_SKIPPED_TEST_DIRS). clang, not GCC: at -O0 with both
#                sanitizers it compiles this project in half GCC's time (test_table's batch 19 s against 45,
#                the whole tree 236 s against 423 wall), and a second compiler finds what GCC lets by.
#                For AVX2 without AVX-512 (x86-64-v3), whatever the machine: code with a form for each
#                (Concury's lane multiply) has its AVX2 form tested here, the native one in build/.
#                It builds the fuzzers too (libFuzzer; coverage from their own files, not the library's:
#                CMakeLists.txt says why): every fuzzer for FUZZ_SECONDS on its seed corpus, a regression
#                run. `make build-fuzz` builds a fuzzing tree with the library instrumented, for a campaign.
#   build-tsan/  ThreadSanitizer, without DPDK: the concurrency tests (tests/concurrency), the only multi-threaded ones.
# Every tree is built with -Werror: a new warning fails the build.
#
# `make report` runs the lab's experiments (lab/*.npf, with NPF) and writes docs/report/index.html and
# docs/report/README.md: MODE=quick (default, under 15 minutes here) or MODE=full (publication grids).
# Both lab targets measure $(FLOWTRACK_BIN), default build/flowtrack; `make report` builds it unless
# FLOWTRACK_BIN is given.
JOBS ?= $(shell nproc)
# ninja runs one job more than the cores (its own default for two cores): each tree's build ended with
# one core idle while the other compiled its last large unity batch (a clean clone's ninja logs: 10 to
# 28 s a tree); a third job keeps that core busy. The tests keep one job a core (the live scenarios'
# workers busy-poll theirs).
BUILD_JOBS ?= $(shell echo $$(($$(nproc) + 1)))
FUZZ_SECONDS ?= 5
CMAKE_FLAGS ?=
PHASE := ./scripts/phase.sh
CONFIGURE = cmake -S . -G Ninja -DFLOWTRACK_WERROR=ON $(CMAKE_FLAGS)
# The release tree is built for this machine (-march=native): it is what the benchmarks measure. Every
# other tree, and a library built for installing, takes CMakeLists.txt's portable x86-64-v3.
CONFIGURE_RELEASE = $(CONFIGURE) -B build -DCMAKE_BUILD_TYPE=Release -DFLOWTRACK_MARCH=native
MODE ?= quick
RELEASE_TEST_DIRS := table;compact;hash;concurrency;live;commands
# The ASan tree builds the library and every layer's tests but the concurrency tests (release and TSan
# run them) and no CLI (the command-line tests run the release program): tests/CMakeLists.txt says why.
ASAN_SKIPPED_TEST_DIRS := concurrency
CONFIGURE_RELEASE_TESTS = $(CONFIGURE_RELEASE) -DFLOWTRACK_GRID=representative -DFLOWTRACK_TEST_DIRS="$(RELEASE_TEST_DIRS)"
LAB_PYTHON := .venv/bin/python
LAB_BUILD := $(if $(FLOWTRACK_BIN),,build)

.PHONY: deps lab-deps build demo report test release-tree tests-beside-live test-release test-live test-lab asan-tree test-asan tsan-tree test-tsan test-fuzz build-fuzz test-nodpdk clean

deps:
	@./scripts/install-deps.sh

# The lab's NPF in .venv (under a lock: see scripts/install-deps.sh).
lab-deps: deps
	@./scripts/install-deps.sh --lab

build: deps
	$(CONFIGURE_RELEASE) -DFLOWTRACK_GRID=full -DFLOWTRACK_TEST_DIRS= > /dev/null
	ninja -C build -j $(BUILD_JOBS)

demo: build
	./scripts/demo.sh build/flowtrack

report: lab-deps $(LAB_BUILD)
	$(LAB_PYTHON) lab/report.py --mode $(MODE)

# The lab's NPF installs in the background (pip, mostly waiting on the network) while the trees build;
# test-lab waits for it. The three trees build first: the release tree, then the sanitizer trees side by
# side (make -j2, each one's output printed whole when it ends), each with a job a core (four compiles
# at once on two cores, one more than a tree alone: the memory of each job is that of a large unity
# batch). Then every test runs on them as built (TREES_BUILT: no target builds its tree again): the
# live scenarios, a chain of mostly waiting that leaves most of a core free, beside the release tree's
# other tests, then the sanitizer trees' and the lab's in one lane (tests-beside-live), so that at most
# two CPU-bound test processes share the machine with the live scenarios, as the release tree's tests
# alone did. Builds never run beside them (scripts/release-tests.sh says why).
test: deps
	@$(PHASE) --reset
	@./scripts/install-deps.sh --lab > .lab-deps.log 2>&1 &
	@{ $(MAKE) --no-print-directory release-tree && \
	   $(MAKE) --no-print-directory -j2 --output-sync=target BUILD_JOBS=$(JOBS) asan-tree tsan-tree && \
	   $(MAKE) --no-print-directory TREES_BUILT=1 test-release \
	     RELEASE_TESTS_THEN='$(MAKE) -k --no-print-directory TREES_BUILT=1 tests-beside-live'; } || \
	  { $(PHASE) --report; exit 1; }
	@$(PHASE) --report
	@echo "make test: all suites passed"

# The sanitizer trees' tests, the fuzzers' runs and the lab's tests, one set after the other (make test
# runs them with -k: a failing set does not keep the next from running).
tests-beside-live: test-asan test-fuzz test-tsan test-lab

release-tree: deps
	$(CONFIGURE_RELEASE_TESTS) > /dev/null
	$(PHASE) release-build ninja -C build -j $(BUILD_JOBS)

# RELEASE_TESTS_THEN: a command run beside the live scenarios once the release tree's other tests are
# done (make test: tests-beside-live).
RELEASE_TESTS_THEN ?=
test-release: $(if $(TREES_BUILT),,release-tree)
	./scripts/release-tests.sh build $(JOBS) $(RELEASE_TESTS_THEN)

# The live scenarios alone (tests/live/*.sh, label "live": root, network namespaces; test-release
# runs them too): flowtrack on veth ports between namespaces it creates.
test-live: deps
	$(CONFIGURE_RELEASE_TESTS) > /dev/null
	ninja -C build -j $(BUILD_JOBS) flowtrack_cli flowtrack_decap
	ctest --test-dir build -L live --output-on-failure

# Every lab test file on its tiny grid through NPF into a throw-away report, the converter's failures,
# the findings' verdicts: seconds. Needs the release binary (test-release builds it).
test-lab: lab-deps
	$(PHASE) lab-tests $(LAB_PYTHON) -m unittest discover -s lab/tests -t lab

# A build-asan/ configured by another compiler (GCC, as it once was) is made anew: given
# a new compiler, CMake empties the tree's cache and drops every -D of the command, which would leave an
# unsanitized tree whose tests pass.
# The ASan tree builds the fuzzers too (FLOWTRACK_WITH_FUZZERS): test-fuzz runs them from it.
asan-tree: deps
	@if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++$$' build-asan/CMakeCache.txt; then \
	  echo "build-asan/ was configured by another compiler: making it anew"; rm -rf build-asan; fi
	$(CONFIGURE) -B build-asan -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_SANITIZE=address,undefined -DFLOWTRACK_MARCH=x86-64-v3 \
	  -DFLOWTRACK_BUILD_APPS=OFF -DFLOWTRACK_TEST_DIRS_SKIPPED="$(ASAN_SKIPPED_TEST_DIRS)" -DFLOWTRACK_WITH_FUZZERS=ON > /dev/null
	$(PHASE) asan-build ninja -C build-asan -j $(BUILD_JOBS)

test-asan: $(if $(TREES_BUILT),,asan-tree)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(PHASE) asan-tests ctest --test-dir build-asan --output-on-failure -j $(JOBS)

# ThreadSanitizer runs the concurrency stress tests (tests/concurrency) only: everything else is single
# threaded and already covered by the two trees above. The tree is configured without DPDK: the
# concurrency tests drive no port, DPDK's own code is not instrumented (so TSan could not see into
# rte_hash, whose variants the release tree stresses), and the live layer's files need not compile for
# it. It is also the suite's check that the library builds without DPDK (test-nodpdk runs
# every non-port test that way).
tsan-tree: deps
	$(CONFIGURE) -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_SANITIZE=thread -DFLOWTRACK_WITH_DPDK=OFF > /dev/null
	$(PHASE) tsan-build ninja -C build-tsan -j $(BUILD_JOBS) test_concurrency

test-tsan: $(if $(TREES_BUILT),,tsan-tree)
	TSAN_OPTIONS=halt_on_error=1 $(PHASE) tsan-tests ctest --test-dir build-tsan -R '^concurrency$$' --output-on-failure

# A fuzzing tree of its own, for a campaign: `make build-fuzz` (CMAKE_FLAGS=-DFLOWTRACK_SANITIZER_OPT=-O1
# for more executions a second), then build-fuzz/fuzz/<name> fuzz/corpus/<name> for as long as you like.
build-fuzz: deps
	CC=clang CXX=clang++ $(CONFIGURE) -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOWTRACK_BUILD_FUZZ=ON \
	  -DFLOWTRACK_SANITIZE=address,undefined > /dev/null
	ninja -C build-fuzz -j $(BUILD_JOBS) fuzzers

# Each fuzzer runs for FUZZ_SECONDS on its seed corpus (copied, so the checked-in corpus stays small),
# from the ASan tree, which builds them.
test-fuzz: $(if $(TREES_BUILT),,asan-tree)
	$(PHASE) fuzz-runs ./scripts/run-fuzzers.sh build-asan $(FUZZ_SECONDS)

# A tree configured without DPDK (FLOWTRACK_WITH_DPDK=OFF), as on a machine that has none: the library
# but its live ports, the CLI without `run --dpdk`, the lab without DPDK's tables, and every test that
# tree registers (the live ones are left out), the installed package's included. Not part of `make
# test`: it is a third build of everything (representative grid: the CLI's tables without DPDK's).
test-nodpdk: deps
	$(CONFIGURE) -B build-nodpdk -DCMAKE_BUILD_TYPE=Release -DFLOWTRACK_WITH_DPDK=OFF -DFLOWTRACK_GRID=representative > /dev/null
	$(PHASE) nodpdk-build ninja -C build-nodpdk -j $(BUILD_JOBS)
	$(PHASE) nodpdk-tests ctest --test-dir build-nodpdk --output-on-failure -j $(JOBS)

clean:
	rm -rf build build-asan build-fuzz build-tsan build-nodpdk .phase-times lab/out
