#!/bin/bash
# Builds the container image from the working tree, runs it and checks it as
# a user would: /healthz, 401 without a token and 200 with the admin token
# printed at the first start, the origins a browser may use (RIGD_ORIGIN,
# and the default of the README's `docker run` line), the viewer's page and
# its three.js and DOMPurify modules, the demo2d scene's artwork, an edit over HTTP and one over a websocket, the data and the token kept across
# stop and start and in a new container on the same volume, a bind-mounted
# host folder (and a clear message when it belongs to someone else), and a
# stop that ends rigd by SIGTERM with status 0. `make test-image` runs it;
# `make test` too.
#
# It uses docker where a docker engine answers, podman otherwise (installed
# with scripts/install-deps.sh, run with runc through a containers.conf of
# its own). Without a registry the base images debian:12 and debian:12-slim
# are made with debootstrap from the mirror the host's apt uses. The host's
# CA bundle goes to the build as a secret, for a proxy that re-signs TLS.
#
# Exit status: 0 when every check passed, and also, after a line saying
# "SKIPPED" and why, when this machine cannot run a container at all (no
# engine, or the engine cannot start one). Any failure of the image itself
# (build, start, a check) is 1. It must never leave containers, volumes or
# temporary folders behind; the base images, the built image and the build
# cache stay for the next run. Everything listens on 127.0.0.1.
#
# Environment: RIGD_IMAGE (default localhost/rigd:test), RIGD_CA_BUNDLE (a
# PEM bundle for the build; default the host's), RIGD_ENGINE (docker or
# podman, to choose), CONTAINERS_CONF (podman's configuration; when set, it
# is used instead of the one this script writes).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
IMAGE=${RIGD_IMAGE:-localhost/rigd:test}
RIGD_UID=10001
PREFIX="rigd-test-$$"
# Generous limits: the machine may be busy with other builds.
T_BUILD=1800
T_CMD=120
T_READY=90

say() { echo "test-image: $*"; }
fail() {
	say "FAILED: $*" >&2
	exit 1
}
skip() {
	say "SKIPPED: $*"
	say "no container was run on this machine; the image is untested here."
	exit 0
}

started=$(date +%s)
workdir=$(mktemp -d /tmp/rigd-test-image.XXXXXX)
containers=()
volumes=()

cleanup() {
	local rc=$?
	set +e
	for c in "${containers[@]}"; do
		if [ "$rc" != 0 ]; then
			echo "--- log of container $c:" >&2
			timeout "$T_CMD" "$E" logs "$c" 2>&1 | sed 's/admin token [0-9a-f]*/admin token (hidden)/' | tail -n 30 >&2
		fi
		timeout "$T_CMD" "$E" rm -f "$c" >/dev/null 2>&1
	done
	for v in "${volumes[@]}"; do
		timeout "$T_CMD" "$E" volume rm -f "$v" >/dev/null 2>&1
	done
	rm -rf "$workdir"
	exit "$rc"
}
E=true
trap cleanup EXIT
trap 'exit 130' INT TERM

# The engine, the base images, free_port and http.
# shellcheck source=scripts/lib-container.sh
. "$ROOT/scripts/lib-container.sh"

# --- helpers for the checks -----------------------------------------------

expect_status() {
	local want=$1 what=$2 got
	shift 2
	got=$(http "$@")
	[ "$got" = "$want" ] || fail "$what: status $got, expected $want: $(head -c 300 "$workdir/body")"
	say "ok: $what ($got)"
}

wait_healthy() {
	local name=$1 port=$2 i
	for ((i = 0; i < T_READY; i++)); do
		if [ "$(http GET "http://127.0.0.1:$port/healthz" 2>/dev/null)" = 200 ]; then
			return
		fi
		if [ "$(timeout "$T_CMD" "$E" inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" != true ]; then
			fail "container $name stopped before it answered /healthz"
		fi
		sleep 1
	done
	fail "container $name did not answer /healthz within ${T_READY}s"
}

# run_rigd NAME DATA [default-origins]: starts the image detached on a free
# port of 127.0.0.1, which it leaves in $port and $url, with RIGD_ORIGIN
# naming that port unless a third argument asks for the image's default
# origins. A port taken between the choice and the start is tried again
# with another.
run_rigd() {
	local name=$1 data=$2 env
	containers+=("$name")
	for _ in 1 2 3; do
		port=$(free_port)
		url="http://127.0.0.1:$port"
		env=(-e "RIGD_ORIGIN=http://localhost:$port")
		[ $# -lt 3 ] || env=()
		if timeout "$T_CMD" "$E" run -d --name "$name" -p "127.0.0.1:$port:8080" \
			"${env[@]}" -v "$data:/data" "$IMAGE" >"$workdir/run.log" 2>&1; then
			return
		fi
		grep -q -i 'address already in use' "$workdir/run.log" || break
		timeout "$T_CMD" "$E" rm -f "$name" >/dev/null 2>&1 || true
	done
	cat "$workdir/run.log" >&2
	fail "$E run of $IMAGE failed"
}

stop_rigd() {
	local name=$1 t0 code
	t0=$(date +%s%N)
	# With a 30 s grace period a rigd that ignored SIGTERM would be killed
	# and report 137; status 0 means it ended on the signal by itself.
	timeout "$T_CMD" "$E" stop -t 30 "$name" >/dev/null || fail "$E stop $name failed"
	code=$(timeout "$T_CMD" "$E" inspect -f '{{.State.ExitCode}}' "$name")
	[ "$code" = 0 ] || fail "$name exited with status $code after SIGTERM, expected 0"
	say "ok: stop ended rigd with status 0 in $((($(date +%s%N) - t0) / 1000000)) ms"
}

# The websocket client: the viewer's own steps with node's ws package
# (web/node_modules, from `make web-deps`): connect with the browser's
# Origin, auth, subscribe, edit; the ack and the update must both arrive.
ws_edit() {
	local port=$1 token=$2
	# shellcheck disable=SC2016 # JavaScript's own ${...}, not the shell's.
	NODE_PATH="$ROOT/web/node_modules" timeout 60 node -e '
		const WebSocket = require("ws");
		const [port, token] = process.argv.slice(1);
		const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { origin: `http://localhost:${port}` });
		const timer = setTimeout(() => { console.error("no ack and update within 30 s"); process.exit(1); }, 30000);
		let acked = false, updated = false, seq = 0;
		ws.on("error", (e) => { console.error(String(e)); process.exit(1); });
		ws.on("open", () => {
			ws.send(JSON.stringify({ type: "auth", token, req: 1 }));
			ws.send(JSON.stringify({ type: "subscribe", scene: "demo", req: 2 }));
		});
		ws.on("message", (data) => {
			const m = JSON.parse(data);
			if (m.type === "error") { console.error(JSON.stringify(m)); process.exit(1); }
			/* After the snapshot: an edit in the subscribe'"'"'s own turn would be
			 * in the snapshot already, with no update to follow. */
			if (m.type === "snapshot")
				ws.send(JSON.stringify({ type: "edit", scene: "demo", req: 3,
					ops: [{ op: "set", id: "arm", euler: [0, 0, 55] }] }));
			if (m.type === "ack" && m.req === 3) { acked = true; seq = m.seq; }
			if (m.type === "update" && m.nodes && m.nodes.some((n) => n.id === "arm")) updated = true;
			if (acked && updated) { clearTimeout(timer); console.log(seq); ws.close(); }
		});
	' "$port" "$token"
}

# --- the run -----------------------------------------------------------------

pick_engine
say "engine: $E ($(timeout "$T_CMD" "$E" --version 2>/dev/null | head -n 1))"
command -v curl >/dev/null 2>&1 || fail "curl is missing (scripts/install-deps.sh installs it)"
[ -d "$ROOT/web/node_modules/ws" ] || fail "web/node_modules/ws is missing: run make web-deps"

engine_ready

ca=${RIGD_CA_BUNDLE:-${NODE_EXTRA_CA_CERTS:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}}
secret=()
[ -r "$ca" ] && secret=(--secret "id=ca_bundle,src=$ca")
say "building $IMAGE from the working tree${secret:+ (CA bundle $ca as a build secret)}"
old_id=$(timeout "$T_CMD" "$E" image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
t0=$(date +%s)
if ! timeout "$T_BUILD" "$E" build -f docker/Dockerfile -t "$IMAGE" "${secret[@]}" . >"$workdir/build.log" 2>&1; then
	tail -n 40 "$workdir/build.log" >&2
	fail "the image does not build"
fi
# The image this build replaced is of no more use (the build cache is
# kept apart from it); an image still in use stays.
new_id=$(timeout "$T_CMD" "$E" image inspect -f '{{.Id}}' "$IMAGE")
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
	timeout "$T_CMD" "$E" rmi "$old_id" >/dev/null 2>&1 || true
fi
# Warnings a user would see in every build.
grep -E '^(npm WARN|debconf: )' "$workdir/build.log" | sort -u | sed 's/^/test-image: note: the build says: /' || true
say "ok: built in $(($(date +%s) - t0)) s, $(($(timeout "$T_CMD" "$E" image inspect -f '{{.Size}}' "$IMAGE") / 1000000)) MB"

# What the image carries: no apt caches, no test packages, no CA bundle.
leftovers=$(timeout "$T_CMD" "$E" run --rm --entrypoint sh "$IMAGE" -c \
	'find /var/cache/apt /var/lib/apt/lists -type f 2>/dev/null | grep -v -e "/lock$" -e "/partial$";
	 ls /usr/share/rigd/web/node_modules | grep -v -x -e three -e dompurify -e .package-lock.json;
	 ls /run/secrets 2>/dev/null; true')
[ -z "$leftovers" ] || fail "the image carries what it should not: $leftovers"
[ "$(timeout "$T_CMD" "$E" run --rm --entrypoint id "$IMAGE" -u)" = "$RIGD_UID" ] ||
	fail "rigd does not run as uid $RIGD_UID"
say "ok: no apt caches, three.js and DOMPurify only, no secrets, uid $RIGD_UID"

# 1. A named volume, as the README runs it.
vol="$PREFIX-data"
volumes+=("$vol")
timeout "$T_CMD" "$E" volume create "$vol" >/dev/null
run_rigd "$PREFIX-a" "$vol"
wait_healthy "$PREFIX-a" "$port"
expect_status 200 "GET /healthz" GET "$url/healthz"
grep -q '"ok"' "$workdir/body" || fail "/healthz says $(cat "$workdir/body")"
token=$(timeout "$T_CMD" "$E" logs "$PREFIX-a" 2>&1 | sed -n 's/.*admin token \([0-9a-f]\{48\}\) .*/\1/p' | head -n 1)
[ -n "$token" ] || fail "no admin token in the log of the first start"
say "ok: the first start printed an admin token"
auth=(-H "Authorization: Bearer $token")
expect_status 401 "GET /api/scenes without a token" GET "$url/api/scenes"
expect_status 401 "GET /api/scenes with a wrong token" GET "$url/api/scenes" -H "Authorization: Bearer wrong-token-0123456789"
expect_status 200 "GET /api/scenes with the admin token" GET "$url/api/scenes" "${auth[@]}"
grep -q '"demo"' "$workdir/body" || fail "no demo scene: $(cat "$workdir/body")"
grep -q '"demo2d"' "$workdir/body" || fail "no demo2d scene: $(cat "$workdir/body")"
expect_status 200 "demo2d's artwork" GET "$url/api/scenes/demo2d/assets/demo2d.svg" "${auth[@]}"
grep -q '<svg' "$workdir/body" || fail "demo2d.svg is not SVG"

expect_status 200 "the viewer's page" GET "$url/"
grep -q '/vendor/three/build/three.module.js' "$workdir/body" || fail "the page has no three.js import map"
expect_status 200 "the viewer's module" GET "$url/app/main.js"
expect_status 200 "three.js's module" GET "$url/vendor/three/build/three.module.js"
grep -q 'REVISION' "$workdir/body" || fail "three.module.js is not three.js"
ctype=$(curl -sS --max-time 30 -o /dev/null -w '%{content_type}' "$url/vendor/three/build/three.module.js")
case $ctype in *javascript*) ;; *) fail "three.module.js is served as '$ctype', a browser will not load it" ;; esac
say "ok: three.js served as $ctype"
expect_status 200 "DOMPurify's module" GET "$url/vendor/dompurify/purify.es.mjs"
grep -q 'DOMPurify' "$workdir/body" || fail "purify.es.mjs is not DOMPurify"
expect_status 403 "an API call from a foreign Origin" GET "$url/api/scenes" "${auth[@]}" -H "Origin: http://evil.example"
expect_status 200 "an API call from the published Origin" GET "$url/api/scenes" "${auth[@]}" -H "Origin: http://localhost:$port"

expect_status 200 "an edit over HTTP" POST "$url/api/scenes/demo/edits" "${auth[@]}" \
	-H 'Content-Type: application/json' -d '{"ops":[{"op":"set","id":"base","euler":[0,77,0]}]}'
ws_seq=$(ws_edit "$port" "$token") || fail "the edit over the websocket failed"
say "ok: an edit over the websocket (seq $ws_seq) and its update"

expect_status 200 "the scene after both edits" GET "$url/api/scenes/demo" "${auth[@]}"
cp "$workdir/body" "$workdir/scene-before"

# 2. stop and start: the same data, the same token, no new token.
stop_rigd "$PREFIX-a"
timeout "$T_CMD" "$E" start "$PREFIX-a" >/dev/null || fail "$E start failed"
wait_healthy "$PREFIX-a" "$port"
n=$(timeout "$T_CMD" "$E" logs "$PREFIX-a" 2>&1 | grep -c 'admin token' || true)
[ "$n" = 1 ] || fail "the admin token was printed $n times, expected once"
expect_status 401 "after a restart: no token" GET "$url/api/scenes/demo"
expect_status 200 "after a restart: the same token, the same scene" GET "$url/api/scenes/demo" "${auth[@]}"
cmp -s "$workdir/body" "$workdir/scene-before" || fail "the scene changed across stop and start"
grep -q "\"seq\":${ws_seq}[,}]" "$workdir/body" || fail "the scene lost the websocket edit (seq $ws_seq)"
stop_rigd "$PREFIX-a"

# 3. A new container on the same volume (an upgrade): the data is the volume's.
# Without RIGD_ORIGIN it takes the README's address, http://localhost:8080.
run_rigd "$PREFIX-b" "$vol" default-origins
wait_healthy "$PREFIX-b" "$port"
expect_status 200 "a new container on the volume: the same token, the same scene" GET "$url/api/scenes/demo" "${auth[@]}"
cmp -s "$workdir/body" "$workdir/scene-before" || fail "the scene differs in a new container"
expect_status 200 "the default origin http://localhost:8080" GET "$url/api/scenes" "${auth[@]}" -H "Origin: http://localhost:8080"
expect_status 403 "without RIGD_ORIGIN, another port's origin" GET "$url/api/scenes" "${auth[@]}" -H "Origin: http://localhost:$port"
! timeout "$T_CMD" "$E" logs "$PREFIX-b" 2>&1 | grep -q 'admin token' || fail "a new container on the volume printed a new token"
stop_rigd "$PREFIX-b"

# 4. A bind-mounted host folder given to the image's uid (only root can
# give a folder away).
if [ "$(id -u)" != 0 ]; then
	say "PASSED in $(($(date +%s) - started)) s, without the host folder checks (they need root to chown)"
	exit 0
fi
host="$workdir/data"
mkdir "$host"
chown "$RIGD_UID:$RIGD_UID" "$host"
run_rigd "$PREFIX-c" "$host"
wait_healthy "$PREFIX-c" "$port"
token2=$(timeout "$T_CMD" "$E" logs "$PREFIX-c" 2>&1 | sed -n 's/.*admin token \([0-9a-f]\{48\}\) .*/\1/p' | head -n 1)
[ -n "$token2" ] || fail "no admin token at the first start on a host folder"
expect_status 200 "a bind-mounted host folder" POST "$url/api/scenes/demo/edits" \
	-H "Authorization: Bearer $token2" -H 'Content-Type: application/json' \
	-d '{"ops":[{"op":"set","id":"hand","euler":[10,0,0]}]}'
stop_rigd "$PREFIX-c"
if ! [ -s "$host/rig.db" ] || ! [ -s "$host/tokens" ]; then
	fail "the host folder holds no rig.db and tokens"
fi
[ "$(stat -c %u "$host/tokens")" = "$RIGD_UID" ] || fail "the tokens file is not owned by uid $RIGD_UID"
say "ok: rig.db and tokens in the host folder, owned by uid $RIGD_UID"

# 5. A host folder owned by root: a clear message and a failed start.
bad="$workdir/root-owned"
mkdir "$bad"
chmod 755 "$bad"
containers+=("$PREFIX-d")
timeout "$T_CMD" "$E" run --name "$PREFIX-d" -v "$bad:/data" "$IMAGE" >"$workdir/bad.log" 2>&1 &&
	fail "rigd started on a folder it cannot write"
grep -q "chown -R $RIGD_UID:$RIGD_UID" "$workdir/bad.log" ||
	fail "no clear message for an unwritable /data: $(cat "$workdir/bad.log")"
say "ok: an unwritable host folder is refused with: $(grep -m1 'not a writable' "$workdir/bad.log")"

# Several rigd behind docker/compose.yaml: scripts/test-compose.sh.
say "PASSED in $(($(date +%s) - started)) s"
