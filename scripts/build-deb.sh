#!/bin/sh
# Builds the Debian package rigd_VERSION_ARCH.deb in BUILD_DIR (default
# build-deb) and checks it: `make deb` runs it, and so does
# docker/Dockerfile's build stage, so that the image installs the very
# package a user would.
#
# The tree is a Release one with the prefix /usr, compiled with Debian's
# hardening flags as dpkg-buildflags gives them with hardening=+all
# (-D_FORTIFY_SOURCE=2, -fstack-protector-strong, -Wformat
# -Werror=format-security, -Wl,-z,relro -Wl,-z,now), plus -fPIE and -pie
# said outright (Debian's gcc makes position-independent executables by
# default, another compiler may not). CPack then makes the package
# (packaging/package.cmake). The checks that follow read the built package,
# not the build's flags: each program must be a PIE with a read-only
# relocation table bound at load (BIND_NOW), call the stack protector and
# the fortified libc functions; and lintian must report no error and no
# warning (its informational tags are printed; docs/deploy.md says why the
# ones it prints remain).
#
# Needs web/node_modules (make web-deps) for the viewer's npm files, and
# lintian unless RIGD_NO_LINTIAN=1 (the image's build stage: the package is
# checked by `make deb` and `make test-package`, not at every image build).
# Prints the path of the package on its last line.
set -eu

cd "$(dirname "$0")/.."
build=${1:-build-deb}
jobs=${JOBS:-$(nproc)}

say() { echo "build-deb: $*"; }
fail() {
	say "FAILED: $*" >&2
	exit 1
}

# With hardening=+all dpkg-buildflags adds -Wl,-z,now (bindnow) to its
# defaults; pie is already the compiler's default on Debian.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cppflags=$(dpkg-buildflags --get CPPFLAGS)
cflags=$(dpkg-buildflags --get CFLAGS)
ldflags=$(dpkg-buildflags --get LDFLAGS)

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DRIGD_WERROR=ON \
	-DCMAKE_C_FLAGS="$cppflags $cflags -fPIE" -DCMAKE_EXE_LINKER_FLAGS="$ldflags -pie" >/dev/null
cmake --build "$build" -j"$jobs" --target rigd rigctl rigd_gz
rm -f "$build"/rigd_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
set -- "$build"/rigd_*.deb
[ -f "$1" ] || fail "cpack made no rigd_*.deb in $build"
deb=$1

# The hardening, read from the programs in the package (stripped, as
# installed): readelf's program headers, dynamic section and the symbols
# the programs import.
tmp=$(mktemp -d /tmp/rigd-build-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
for prog in rigd rigctl; do
	bin="$tmp/usr/bin/$prog"
	[ -x "$bin" ] || fail "$deb has no /usr/bin/$prog"
	readelf -h "$bin" | grep -q 'Type: *DYN' || fail "$prog is not position-independent (ELF type is not DYN)"
	readelf -d "$bin" | grep -q 'Flags:.*PIE' || fail "$prog is not a PIE (no DF_1_PIE)"
	readelf -l "$bin" | grep -q GNU_RELRO || fail "$prog has no RELRO segment (-Wl,-z,relro)"
	readelf -d "$bin" | grep -q -E 'BIND_NOW|Flags:.* NOW' || fail "$prog is not bound at load (-Wl,-z,now)"
	syms=$(readelf --dyn-syms -W "$bin")
	echo "$syms" | grep -q '__stack_chk_fail' || fail "$prog does not call the stack protector (-fstack-protector-strong)"
	echo "$syms" | grep -q -E '__[a-z0-9_]+_chk(@|$| )' || fail "$prog calls no fortified function (-D_FORTIFY_SOURCE=2)"
	say "ok: $prog is a PIE with RELRO and BIND_NOW, stack protector and fortified calls ($(echo "$syms" | grep -o -E '__[a-z0-9_]+_chk' | sort -u | wc -l) _chk functions)"
done

if [ "${RIGD_NO_LINTIAN:-0}" != 1 ]; then
	command -v lintian >/dev/null 2>&1 || fail "lintian is missing (scripts/install-deps.sh installs it)"
	# --fail-on error,warning: an E: or W: tag fails; I: tags are shown.
	if ! lintian --info --display-info --fail-on error,warning "$deb" >"$tmp/lintian.log" 2>&1; then
		cat "$tmp/lintian.log" >&2
		fail "lintian reports an error or a warning on $deb"
	fi
	if grep -q -E '^[EW]: ' "$tmp/lintian.log"; then
		cat "$tmp/lintian.log" >&2
		fail "lintian reports an error or a warning on $deb"
	fi
	say "ok: lintian: no error, no warning; $(grep -c '^I: ' "$tmp/lintian.log" || true) informational tags:"
	grep -E '^[IP]: ' "$tmp/lintian.log" | grep -v '^N: ' | sed 's/^/build-deb:   /' || true
fi
say "ok: $deb, $(($(stat -c %s "$deb") / 1024)) KiB"
echo "$deb"
