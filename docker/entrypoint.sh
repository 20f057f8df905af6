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
# 0.0.0.0:8080; tests/e2e/docker.js runs this script on 127.0.0.1:0).
# Arguments are passed on to rigd (the image's CMD gives --origin).
set -eu

data=${RIGD_DATA:-/data}
web=${RIGD_WEB:-/usr/share/rigd/web}
listen=${RIGD_LISTEN:-0.0.0.0:8080}
tokens="$data/tokens"

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

exec rigd --listen "$listen" --db "$data/rig.db" --web "$web" --tokens "$tokens" "$@"
