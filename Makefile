# The front door. The real build is CMake; this file installs what is
# missing, builds, runs the suite twice (optimised, then with ASan+UBSan),
# builds rigd without the cluster and tests it alone, fuzzes, builds and
# checks the container image, and starts the server. See README.md.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
PORT       ?= 8080
DB         ?= data/rig.db
CTEST_ARGS ?=
FUZZ_BUILD ?= build-fuzz
LONE_BUILD ?= build-lone
DEB_BUILD  ?= build-deb
RIGD_FUZZ_SECONDS ?= 30
FUZZ_TARGETS = msg edit gltf bin svg skeleton_assets skeleton

.PHONY: all deps web-deps build build-asan test test-release test-asan run bench clean
.PHONY: build-fuzz test-fuzz fuzz-merge test-image build-lone test-lone deb test-package test-compose

all: build

deps:
	@./scripts/install-deps.sh

# npm ci only when the lock file changed since the last install.
web-deps: deps
	@if [ ! -f web/node_modules/.package-lock.json ] || \
	    [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then \
		cd web && npm ci --no-audit --no-fund; \
	fi

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIGD_WERROR=ON
	cmake --build $(BUILD) -j$(JOBS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRIGD_SANITIZE=ON -DRIGD_WERROR=ON
	cmake --build $(ASAN_BUILD) -j$(JOBS)

test-release: build web-deps
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)

test-asan: build-asan web-deps
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# rigd without the cluster's side (-DRIGD_CLUSTER=OFF: no server/cluster,
# no server/clustered, no hiredis): it must build, and serve alone. Built
# as a packager builds, with clang and CMAKE_BUILD_TYPE=Release (NDEBUG:
# no assert may carry a check the code needs). Runs the unit tests and the
# single-process e2e tests that cover the path an edit takes (about a
# minute after a build of about two).
LONE_TESTS = unit_|e2e_lone|e2e_api|e2e_concurrent|e2e_steps|e2e_interest|e2e_svg
build-lone: deps
	cmake -S . -B $(LONE_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release \
		-DRIGD_CLUSTER=OFF -DRIGD_WERROR=ON
	cmake --build $(LONE_BUILD) -j$(JOBS)

test-lone: build-lone web-deps
	cd $(LONE_BUILD) && ctest --output-on-failure -j$(JOBS) -R '$(LONE_TESTS)'

# The Debian package, rigd_VERSION_ARCH.deb in $(DEB_BUILD)/ (CPack's DEB
# generator: packaging/package.cmake): a Release tree with the prefix /usr
# and Debian's hardening flags, the viewer's npm files from web/node_modules.
# scripts/build-deb.sh checks the hardening in the built programs and fails
# on any lintian error or warning.
deb: deps web-deps
	JOBS=$(JOBS) ./scripts/build-deb.sh $(DEB_BUILD)

# The package installed with apt into a fresh Debian 12 container, its
# service started as its unit says, the viewer served (scripts/test-package.sh).
# SKIPPED, like test-image, where no container can run.
test-package: deb
	./scripts/test-package.sh $(DEB_BUILD)

# The fuzz targets of tests/fuzz (README there): a clang build of their own
# with libFuzzer, ASan and UBSan. test-fuzz replays the committed corpus and
# fuzzes each target for RIGD_FUZZ_SECONDS; fuzz-merge adds the inputs those
# runs found that raise coverage to tests/fuzz/corpus (commit them).
build-fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIGD_FUZZ=ON -DRIGD_WERROR=ON
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))

# The targets run side by side whatever the core count: each runs for a
# fixed time, so the step takes about RIGD_FUZZ_SECONDS plus the build.
test-fuzz: build-fuzz
	cd $(FUZZ_BUILD) && RIGD_FUZZ_SECONDS=$(RIGD_FUZZ_SECONDS) \
		ctest -L fuzz --output-on-failure -j$(words $(FUZZ_TARGETS))

fuzz-merge: build-fuzz
	@for t in $(FUZZ_TARGETS); do \
		tests/fuzz/run.sh merge $(FUZZ_BUILD)/tests/fuzz_$$t $$t $(FUZZ_BUILD)/fuzz-work/$$t || exit 1; \
	done

# The container image built from the working tree and checked as a user
# would run it (scripts/test-image.sh says what). A machine that cannot run
# a container at all prints SKIPPED and why; a fault of the image fails.
# Cold (no base image, no build cache) about 5 minutes on 2 busy cores;
# under a minute after a change to the tree; 16 s when nothing changed.
test-image: web-deps
	./scripts/test-image.sh

# docker/compose.yaml brought up with podman-compose (Redis and three rigd),
# the owner of a scene killed mid-edits, every acknowledged edit checked,
# down -v leaving nothing (scripts/test-compose.sh). After test-image the
# rigd image is a cache hit; about 40 s then. SKIPPED where no container
# can run.
test-compose: web-deps
	./scripts/test-compose.sh

test: test-release test-asan test-lone test-fuzz test-image test-package test-compose

# Every benchmark, each printing its figures beside its peer (three.js, a
# plain memory copy, one transaction per batch, ...). Never part of `test`.
bench: build web-deps
	./$(BUILD)/bench/bench_core
	./$(BUILD)/bench/bench_proto
	./$(BUILD)/bench/bench_store
	cmake --build $(BUILD) --target bench_net
	cmake --build $(BUILD) --target bench_wire
	cmake --build $(BUILD) --target bench_deflate
	cmake --build $(BUILD) --target bench_views
	cmake --build $(BUILD) --target bench_interest
	cmake --build $(BUILD) --target bench_clip
	cmake --build $(BUILD) --target bench_fanout
	cmake --build $(BUILD) --target bench_cluster

run: build web-deps
	@mkdir -p $(dir $(DB))
	./$(BUILD)/rigd --listen 127.0.0.1:$(PORT) --db $(DB) --web web --demo2d on

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(LONE_BUILD) $(DEB_BUILD)
