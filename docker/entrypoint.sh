#!/bin/sh
# The container's entry point: rigd on 0.0.0.0 with tokens.
#
# Inside a container the published port reaches rigd only through a
# non-loopback address, and rigd refuses such an address without tokens
# (docs/security.md). So on the first start, when the volume holds no tokens
# file yet, this script makes one admin token, stores only its SHA-256 in the
# file and prints the token once on stderr. Replace or extend the file (one
# ROLE:SCENE:TOKEN a line) to hand out viewer and editor tokens.
#
# Environment: RIGD_DATA (default /data) holds rig.db and tokens;
# RIGD_WEB (default /usr/share/rigd/web); RIGD_LISTEN (default
# 0.0.0.0:8080; tests/e2e/docker.js runs this script on 127.0.0.1:0);
# RIGD_ORIGIN, the origins a browser may use, separated by spaces (default
# http://localhost:8080 http://127.0.0.1:8080, the address of the README's
# `docker run` line; a port published elsewhere needs its own, e.g.
# RIGD_ORIGIN=http://localhost:9000). Arguments are passed on to rigd; when
# they name an --origin themselves, the default origins are left out.
#
# This script must never print the token again after the first start, nor
# keep it anywhere but in the one line it prints.
set -euf

data=${RIGD_DATA:-/data}
web=${RIGD_WEB:-/usr/share/rigd/web}
listen=${RIGD_LISTEN:-0.0.0.0:8080}
tokens="$data/tokens"

# A host folder mounted at /data keeps its owner; say how to fix it rather
# than fail later with a bare "Permission denied".
if ! [ -d "$data" ] || ! [ -w "$data" ] || ! [ -x "$data" ]; then
	owner=$(stat -c %u:%g "$data" 2>/dev/null || echo "missing")
	echo "rigd: $data is not a writable directory for uid $(id -u) (owner: $owner)." >&2
	echo "rigd: a mounted host folder must belong to that uid: chown -R $(id -u):$(id -g) FOLDER on the host, or use a named volume (-v rigd-data:$data)." >&2
	exit 1
fi

origin_given=0
for a in "$@"; do
	case $a in
	--origin) origin_given=1 ;;
	esac
done
if [ -n "${RIGD_ORIGIN+set}" ]; then
	origins=$RIGD_ORIGIN
elif [ "$origin_given" = 1 ]; then
	origins=""
else
	origins="http://localhost:8080 http://127.0.0.1:8080"
fi
# Prepended in reverse so that they reach rigd in the order given.
rev=""
for o in $origins; do
	rev="$o $rev"
done
for o in $rev; do
	set -- --origin "$o" "$@"
done

if [ ! -e "$tokens" ]; then
	token=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
	hash=$(rigd --hash-token "$token")
	(
		umask 077
		printf '# made at the first start; one ROLE:SCENE:TOKEN a line\nadmin:*:%s\n' "$hash" >"$tokens.new"
	)
	mv "$tokens.new" "$tokens"
	echo "rigd: first start: admin token $token (only its hash is kept, in $tokens; this is the one time it is shown)" >&2
fi

exec rigd --listen "$listen" --db "$data/rig.db" --web "$web" --tokens "$tokens" --demo2d on "$@"
