#!/bin/sh
# Installs what rigd needs to build, test and run on Debian 12, as root.
# Idempotent: when every package is present it returns at once without
# touching the network. Used by `make run`, `make test`, docker/Dockerfile
# and scripts/test-image.sh.
#
# RIGD_NO_BROWSER=1 leaves out the browser (the image's build stage).
# RIGD_IMAGE_TOOLS=1 adds what scripts/test-image.sh needs to build and run
# the container image without a registry: podman with runc (crun refuses
# hybrid cgroups), netavark and iptables for published ports, aardvark-dns
# for the names of a compose file's services on its network, debootstrap
# with Debian's keyring to make the base image locally, and podman-compose
# for scripts/test-compose.sh.
set -eu

PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev \
libwebsockets-dev libwebsockets-evlib-uv libuv1-dev libcjson-dev libsqlite3-dev sqlite3 \
libcmocka-dev libxml2-dev libpng-dev libhiredis-dev curl ca-certificates nodejs npm file"
# file is what CPack's dpkg-shlibdeps step runs on the programs (make deb,
# and the image's build stage). The browser is for the viewer's tests,
# redis-server for the cluster's (a cluster's Redis is a server of its own,
# never part of rigd's image), python3 for the test of the protocol's
# Python decoder and lintian for the check of `make deb`; a container
# image skips them.
if [ "${RIGD_NO_BROWSER:-0}" != 1 ]; then
	PKGS="$PKGS chromium redis-server python3 lintian"
fi
if [ "${RIGD_IMAGE_TOOLS:-0}" = 1 ]; then
	PKGS="$PKGS podman runc netavark aardvark-dns iptables debootstrap debian-archive-keyring podman-compose"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# Node may come from outside Debian (a newer node on PATH); accept it.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
	missing=$(echo "$missing" | tr ' ' '\n' | grep -v -x -e nodejs -e npm | tr '\n' ' ')
fi
missing=$(echo "$missing" | tr -s ' ' | sed 's/^ //;s/ $//')

if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: missing packages: $missing (run as root, or install them)" >&2
		exit 1
	fi
	echo "install-deps: installing $missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
