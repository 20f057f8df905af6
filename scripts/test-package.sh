#!/bin/bash
# The Debian package's test (`make test-package`, and `make test`): the
# rigd_*.deb of `make deb` installed with apt into a fresh Debian 12
# container, made from the same base image as scripts/test-image.sh's, then
# its service started as the installed unit says and the viewer checked, as
# an administrator would see it after `apt install ./rigd_*.deb`.
#
# 1. apt-get install -y ./rigd_VERSION_ARCH.deb resolves Depends (the
#    maintainer scripts make the rigd system user and /var/lib/rigd).
#    The container is given no Debian mirror: it gets a local apt
#    repository, made on the host from the packages rigd's Depends need
#    that the base lacks (copied from /var/cache/apt/archives when the host
#    has them, fetched with `apt-get download` otherwise), so the test does
#    not depend on a mirror being up, and is fast.
# 2. There is no systemd in the container: rigd is started as the
#    installed /lib/systemd/system/rigd.service would start it, its
#    ExecStart line read from the unit and expanded with the unit's
#    EnvironmentFile (/etc/default/rigd as shipped), run as the unit's User
#    and Group in its WorkingDirectory with its UMask and NoNewPrivileges.
# 3. /healthz answers, GET / serves the viewer's page, its own module and
#    its npm modules (three.js, DOMPurify), rigd runs as the rigd user and
#    its database is in /var/lib/rigd. The time from `apt-get install` to
#    the last of these answers is printed ("installs, starts and answers").
# 4. systemd-analyze verify accepts the installed unit, run in the same
#    container after installing systemd and man-db there (the unit's
#    Documentation= names a man page, which verify looks up): any message
#    fails, not only a non-zero status.
# 5. apt-get purge removes the programs, the unit and /etc/default/rigd.
#
# Usage: scripts/test-package.sh [BUILD_DIR] (default build-deb, where
# `make deb` leaves the package). Exit status 0 when every check passed,
# and also after "SKIPPED" and why when this machine cannot run a container
# (the same rules as scripts/test-image.sh); 1 on any failure of the
# package. It leaves no container behind; the local apt repository stays in
# BUILD_DIR/apt-repo for the next run.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${1:-build-deb}
T_CMD=120
T_READY=30
NAME="rigd-test-package-$$"

say() { echo "test-package: $*"; }
fail() {
	say "FAILED: $*" >&2
	exit 1
}
skip() {
	say "SKIPPED: $*"
	say "no container was run on this machine; the package is untested here."
	exit 0
}

started=$(date +%s)
workdir=$(mktemp -d /tmp/rigd-test-package.XXXXXX)
running=0
cleanup() {
	local rc=$?
	set +e
	if [ "$running" = 1 ]; then
		if [ "$rc" != 0 ]; then
			echo "--- rigd's output in the container:" >&2
			timeout "$T_CMD" "$E" exec "$NAME" sh -c 'tail -n 30 /tmp/rigd.log' >&2
		fi
		# sleep, the container's first process, ignores SIGTERM: kill it.
		timeout "$T_CMD" "$E" kill "$NAME" >/dev/null 2>&1
		timeout "$T_CMD" "$E" rm -f "$NAME" >/dev/null 2>&1
	fi
	rm -rf "$workdir"
	exit "$rc"
}
E=true
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=scripts/lib-container.sh
. "$ROOT/scripts/lib-container.sh"

debs=("$BUILD"/rigd_*.deb)
[ -f "${debs[0]}" ] || fail "no rigd_*.deb in $BUILD: run make deb"
[ "${#debs[@]}" = 1 ] || fail "several rigd_*.deb in $BUILD: ${debs[*]}"
deb=$(realpath "${debs[0]}")
version=$(dpkg-deb -f "$deb" Version)
say "package: $deb ($(($(stat -c %s "$deb") / 1024)) KiB, version $version)"

pick_engine
say "engine: $E ($(timeout "$T_CMD" "$E" --version 2>/dev/null | head -n 1))"
engine_ready
command -v curl >/dev/null 2>&1 || fail "curl is missing (scripts/install-deps.sh installs it)"
command -v nsenter >/dev/null 2>&1 || fail "nsenter is missing (util-linux)"

# --- the local apt repository -----------------------------------------------

# closure PKG...: the names of PKG and of everything they depend on, on the
# host's apt (virtual packages, printed as <name>, are left out: apt picks
# a real provider, which the closure names too).
closure() {
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "$@" 2>/dev/null | grep -v -e '^ ' -e '^<' | sort -u
}

# The Depends of the package, the tools step 4 installs, and nothing the
# base image has already.
repo="$ROOT/$BUILD/apt-repo"
mkdir -p "$repo"
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/(.*//; s/|.*//; s/ //g' | grep -v '^$')
# shellcheck disable=SC2086 # one name a word
closure $deps systemd man-db >"$workdir/closure"
timeout "$T_CMD" "$E" run --rm debian:12 dpkg-query -W -f '${Package}\n' | sort -u >"$workdir/base"
comm -23 "$workdir/closure" "$workdir/base" >"$workdir/needed"
# apt's file names for the candidates: 'URI' NAME SIZE HASH, one a line.
# shellcheck disable=SC2046
(cd "$workdir" && apt-get download --print-uris $(cat needed) 2>/dev/null) >"$workdir/uris" ||
	fail "apt-get download --print-uris failed for: $(tr '\n' ' ' <"$workdir/needed")"
fetched=0
while read -r _ file _; do
	[ -s "$repo/$file" ] && continue
	if [ -s "/var/cache/apt/archives/$file" ]; then
		cp "/var/cache/apt/archives/$file" "$repo/"
	else
		pkg=${file%%_*}
		(cd "$repo" && timeout 300 apt-get download -q "$pkg" >/dev/null 2>&1) ||
			fail "$file is neither in /var/cache/apt/archives nor fetched by apt-get download"
		fetched=$((fetched + 1))
	fi
done <"$workdir/uris"
# Only the files of this run's list are indexed (older versions stay out).
awk '{ print $2 }' "$workdir/uris" | sort >"$workdir/files"
(cd "$repo" && mkdir -p ../apt-index && rm -f ../apt-index/*.deb &&
	xargs -a "$workdir/files" -I{} ln -f {} ../apt-index/{}) || fail "cannot index the local apt repository"
(cd "$ROOT/$BUILD/apt-index" && dpkg-scanpackages -m . /dev/null 2>/dev/null >Packages) ||
	fail "dpkg-scanpackages failed (dpkg-dev)"
say "local apt repository: $(wc -l <"$workdir/files") packages the base lacks ($fetched fetched now, the rest from the host's apt cache or a previous run)"

# --- install, start, answer ---------------------------------------------------

timeout "$T_CMD" "$E" run -d --name "$NAME" --network none \
	-v "$ROOT/$BUILD/apt-index:/srv/apt:ro" -v "$deb:/srv/pkg/$(basename "$deb"):ro" \
	debian:12 sleep infinity >/dev/null || fail "$E run of debian:12 failed"
running=1
pid=$(timeout "$T_CMD" "$E" inspect -f '{{.State.Pid}}' "$NAME")
# The host's curl in the container's network namespace: the container has
# no curl, and needs no network of its own (--network none: the local
# repository is all apt gets).
in_ns_curl() { nsenter -t "$pid" -n curl "$@"; }

t0=$(date +%s%N)
timeout "$T_CMD" "$E" exec -e DEBIAN_FRONTEND=noninteractive "$NAME" sh -c '
	set -e
	rm -f /etc/apt/sources.list.d/*
	echo "deb [trusted=yes] file:/srv/apt ./" >/etc/apt/sources.list
	apt-get update -q
	apt-get install -y -q --no-install-recommends /srv/pkg/rigd_*.deb' >"$workdir/install.log" 2>&1 || {
	tail -n 30 "$workdir/install.log" >&2
	fail "apt-get install ./$(basename "$deb") failed"
}
t_installed=$(date +%s%N)
say "ok: apt-get install ./$(basename "$deb") in $(((t_installed - t0) / 1000000)) ms ($(grep -c '^Setting up' "$workdir/install.log") packages set up)"

# The unit as installed, and what a systemd would do with it. EnvironmentFile
# (a leading - means optional) is read as systemd reads it: KEY=VALUE lines,
# with quotes; in ExecStart ${VAR} is one word and $VAR splits on spaces,
# which is how a shell treats "${VAR}" and $VAR.
unit=/lib/systemd/system/rigd.service
timeout "$T_CMD" "$E" exec "$NAME" cat "$unit" >"$workdir/rigd.service" || fail "the package installed no $unit"
key() { sed -n "s/^$1=//p" "$workdir/rigd.service"; }
exec_start=$(key ExecStart)
env_file=$(key EnvironmentFile)
env_file=${env_file#-}
user=$(key User)
group=$(key Group)
workdir_unit=$(key WorkingDirectory)
umask_unit=$(key UMask)
[ -n "$exec_start" ] && [ -n "$user" ] && [ -n "$group" ] || fail "the unit has no ExecStart, User or Group"
[ "$(key NoNewPrivileges)" = yes ] && nnp=(--no-new-privs) || nnp=()
cmd=$(echo "$exec_start" | sed 's/\${\([A-Za-z_][A-Za-z0-9_]*\)}/"${\1}"/g')
say "ExecStart=$exec_start (User=$user, EnvironmentFile=$env_file)"
# Exported so that rigd sees only what the unit gives it.
timeout "$T_CMD" "$E" exec -d "$NAME" sh -c "
	set -a; [ -z '$env_file' ] || . '$env_file'; set +a
	cd '${workdir_unit:-/}' && umask '${umask_unit:-0022}'
	exec setpriv ${nnp[*]} --reuid='$user' --regid='$group' --init-groups sh -c 'exec $cmd' >/tmp/rigd.log 2>&1
" >/dev/null || fail "cannot start rigd in the container"

listen=$(timeout "$T_CMD" "$E" exec "$NAME" sh -c ". '$env_file'; echo \"\$RIGD_LISTEN\"")
url="http://$listen"
for ((i = 0; i < T_READY * 10; i++)); do
	[ "$(in_ns_curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/healthz" 2>/dev/null)" = 200 ] && break
	timeout "$T_CMD" "$E" exec "$NAME" sh -c 'grep -l rigd /proc/[0-9]*/cmdline >/dev/null 2>&1' ||
		fail "rigd stopped before it answered /healthz: $(timeout "$T_CMD" "$E" exec "$NAME" cat /tmp/rigd.log)"
	sleep 0.1
done
t_healthy=$(date +%s%N)

get() { # get PATH WANT-IN-BODY WHAT
	local code
	code=$(in_ns_curl -sS -o "$workdir/body" -w '%{http_code}' --max-time 10 "$url$1") || code=000
	[ "$code" = 200 ] || fail "GET $1 ($3): status $code"
	grep -q -- "$2" "$workdir/body" || fail "GET $1 ($3) has no '$2': $(head -c 200 "$workdir/body")"
}
get /healthz '"ok"' "health"
get / '/vendor/three/build/three.module.js' "the viewer's page and its import map"
get /app/main.js 'import' "the viewer's own module"
get /vendor/three/build/three.module.js 'REVISION' "three.js, an npm module"
get /vendor/dompurify/purify.es.mjs 'DOMPurify' "DOMPurify, an npm module"
t_answered=$(date +%s%N)
ms() { echo $((($1 - t0) / 1000000)); }
say "ok: installs, starts and answers in $(ms "$t_answered") ms (installed $(ms "$t_installed"), healthy $(ms "$t_healthy"), viewer and modules served $(ms "$t_answered"); target 10000)"

# Who runs it, and where its data went.
facts=$(timeout "$T_CMD" "$E" exec "$NAME" sh -c '
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = rigd ] || continue
		echo "uid $(awk "/^Uid:/ { print \$2 }" "$p/status") user $(stat -c %U "$p")"
		echo "nnp $(awk "/^NoNewPrivs:/ { print \$2 }" "$p/status")"
	done
	echo "rigd-uid $(id -u rigd)"
	stat -c "db %U %a" /var/lib/rigd/rig.db 2>/dev/null || echo "db missing"
	stat -c "state %U %a" /var/lib/rigd
	echo "version $(rigd --version)"')
rigd_uid=$(echo "$facts" | sed -n 's/^rigd-uid //p')
echo "$facts" | grep -q "^uid $rigd_uid user $user$" || fail "rigd does not run as $user (uid $rigd_uid): $facts"
[ ${#nnp[@]} = 0 ] || echo "$facts" | grep -q '^nnp 1$' || fail "rigd runs without NoNewPrivs: $facts"
echo "$facts" | grep -q '^db rigd 600$' || fail "rigd's database is not /var/lib/rigd/rig.db owned by rigd, mode 600 (UMask): $facts"
echo "$facts" | grep -q '^state rigd 750$' || fail "/var/lib/rigd is not rigd's, mode 750: $facts"
echo "$facts" | grep -q "^version .*$version" || fail "rigd --version does not name $version: $facts"
say "ok: rigd runs as $user (uid $rigd_uid, no new privileges), its database is /var/lib/rigd/rig.db (rigd, 600), rigd --version names $version"

# --- the unit, checked by systemd itself -----------------------------------------

timeout "$T_CMD" "$E" exec -e DEBIAN_FRONTEND=noninteractive "$NAME" \
	apt-get install -y -q --no-install-recommends systemd man-db >"$workdir/systemd.log" 2>&1 || {
	tail -n 20 "$workdir/systemd.log" >&2
	fail "cannot install systemd and man-db in the container"
}
if ! out=$(timeout "$T_CMD" "$E" exec "$NAME" systemd-analyze verify "$unit" 2>&1) || [ -n "$out" ]; then
	fail "systemd-analyze verify $unit: ${out:-non-zero status}"
fi
say "ok: systemd-analyze verify accepts $unit (systemd $(timeout "$T_CMD" "$E" exec "$NAME" systemd-analyze --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'))"

# --- removal ---------------------------------------------------------------------

timeout "$T_CMD" "$E" exec "$NAME" sh -c 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = rigd ] && kill ${p#/proc/}; done; true'
left=$(timeout "$T_CMD" "$E" exec -e DEBIAN_FRONTEND=noninteractive "$NAME" sh -c '
	apt-get purge -y -q rigd >/tmp/purge.log 2>&1 || { echo "purge failed:"; tail -n 5 /tmp/purge.log; }
	for f in /usr/bin/rigd /usr/bin/rigctl /lib/systemd/system/rigd.service /etc/default/rigd /usr/share/rigd; do
		[ ! -e "$f" ] || echo "$f"
	done')
[ -z "$left" ] || fail "apt-get purge rigd left: $left"
say "ok: apt-get purge rigd removes the programs, the unit, /etc/default/rigd and the viewer"
say "PASSED in $(($(date +%s) - started)) s"
