# Shared by scripts/test-image.sh, scripts/test-package.sh and
# scripts/test-compose.sh (sourced, never run): the container engine and
# its set-up, the Debian 12 base images made without a registry, and the
# small HTTP helpers their checks use.
#
# The sourcing script defines say, fail and skip (skip prints "SKIPPED"
# and why, then exits 0), sets ROOT (the top of the tree), workdir (a
# temporary folder it removes) and T_CMD (the limit of one engine
# command, in seconds), and sets E to "true" before its cleanup trap, so
# that a cleanup before pick_engine runs no engine command. pick_engine
# sets E to docker or podman; engine_ready checks the engine can start a
# container from debian:12, making the base images first when needed.

# --- the engine ------------------------------------------------------------

pick_engine() {
	# podman-docker's `docker` is podman itself, which needs the set-up below.
	local version=""
	command -v docker >/dev/null 2>&1 && version=$(timeout 20 docker --version 2>/dev/null || true)
	if [ "${RIGD_ENGINE:-}" != podman ] && [ -n "$version" ] && [[ $version != *[Pp]odman* ]] &&
		timeout 20 docker info >/dev/null 2>&1; then
		E=docker
		return
	fi
	if [ "${RIGD_ENGINE:-}" = docker ]; then
		skip "RIGD_ENGINE=docker, but no docker engine answers ('docker info' fails)."
	fi
	local why
	if why=$(RIGD_IMAGE_TOOLS=1 "$ROOT/scripts/install-deps.sh" 2>&1); then
		echo "$why" | grep '^install-deps:' || true
	else
		echo "$why" | tail -n 5
		command -v podman >/dev/null 2>&1 ||
			skip "no docker engine answers and podman could not be installed (see above)."
	fi
	E=podman
	# crun refuses hybrid cgroups (v1 with a v2 tree beside it), runc runs
	# there; and without CAP_SYS_RESOURCE a container's rlimits may not
	# exceed the host's hard limits, which podman's defaults do.
	if [ -z "${CONTAINERS_CONF:-}" ]; then
		local nofile nproc
		nofile=$(ulimit -Hn)
		nproc=$(ulimit -Hu)
		[ "$nofile" = unlimited ] && nofile=1048576
		[ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
		cat >"$workdir/containers.conf" <<-CONF
			[containers]
			default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
			[engine]
			runtime = "$(command -v runc >/dev/null 2>&1 && echo runc || echo crun)"
		CONF
		export CONTAINERS_CONF="$workdir/containers.conf"
	fi
}

# --- the base images -------------------------------------------------------

has_image() { timeout "$T_CMD" "$E" image inspect "$1" >/dev/null 2>&1; }

# The first URI of the host's apt sources that serves SUITE (one-line and
# deb822 formats). Read here, never written into the repository.
apt_uri() {
	local suite=$1 f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk -v s="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while (i <= NF && $(i - 1) !~ /\]$/) i++;
			if ($(i + 1) == s) { print $i; exit } }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk -v s="$suite" 'BEGIN { RS = ""; FS = "\n" }
			{ uri = ""; ok = 0; deb = 0
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { split($i, a, /[ \t]+/); uri = a[2] }
				if ($i ~ /^Suites:/) { n = split($i, a, /[ \t]+/); for (j = 2; j <= n; j++) if (a[j] == s) ok = 1 }
				if ($i ~ /^Types:.*deb( |$)/) deb = 1
				if ($i ~ /^Enabled: *no/) ok = 0 }
			  if (ok && deb && uri != "") { print uri; exit } }' "$f"
	done
}

make_base_images() {
	if has_image debian:12 && has_image debian:12-slim; then
		return
	fi
	say "pulling debian:12 and debian:12-slim"
	if timeout 300 "$E" pull docker.io/library/debian:12 >/dev/null 2>&1 &&
		timeout 300 "$E" pull docker.io/library/debian:12-slim >/dev/null 2>&1; then
		return
	fi
	# No registry: the same Debian, made from the host's own mirror.
	local mirror security rootfs
	mirror=$(apt_uri bookworm | head -n 1)
	security=$(apt_uri bookworm-security | head -n 1)
	[ -n "$mirror" ] || skip "no registry answers and the host's apt sources name no bookworm mirror to debootstrap from."
	command -v debootstrap >/dev/null 2>&1 || skip "no registry answers and debootstrap is not installed."
	say "no registry: making debian:12 with debootstrap from the host's apt mirror"
	rootfs="$workdir/rootfs"
	if ! timeout 900 debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$workdir/debootstrap.log" 2>&1; then
		tail -n 20 "$workdir/debootstrap.log"
		skip "no registry answers and debootstrap from the host's mirror failed (see above)."
	fi
	{
		echo "deb $mirror bookworm main"
		echo "deb $mirror bookworm-updates main"
		[ -z "$security" ] || echo "deb $security bookworm-security main"
	} >"$rootfs/etc/apt/sources.list"
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
	if ! timeout 600 tar -C "$rootfs" -c . |
		timeout 600 "$E" import --change 'CMD ["bash"]' - debian:12 >"$workdir/import.log" 2>&1; then
		tail -n 5 "$workdir/import.log"
		skip "$E cannot import the debootstrapped tree as a base image."
	fi
	timeout "$T_CMD" "$E" tag debian:12 debian:12-slim
	rm -rf "$rootfs"
}

# engine_ready: the engine answers, the base images exist and a container
# starts. A failure here is the machine's (kernel, cgroups, permissions),
# not what is being tested, so it skips.
engine_ready() {
	local out
	if ! out=$(timeout "$T_CMD" "$E" info 2>&1 >/dev/null); then
		echo "$out" | tail -n 5
		skip "'$E info' fails: the engine does not work on this machine (see above)."
	fi
	make_base_images
	if ! out=$(timeout "$T_CMD" "$E" run --rm debian:12 true 2>&1); then
		echo "$out" | tail -n 5
		skip "$E cannot start a container on this machine (see above)."
	fi
}

# --- helpers for the checks -----------------------------------------------

free_port() {
	timeout 30 node -e 'const s = require("net").createServer();
		s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# http METHOD URL [curl args...]: prints the status, the body goes to
# $workdir/body.
http() {
	local method=$1 url=$2
	shift 2
	curl -sS -o "$workdir/body" -w '%{http_code}' --max-time 30 -X "$method" "$@" "$url" || echo 000
}

