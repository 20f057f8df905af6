#!/bin/sh
# The entry point of docker/redis.Dockerfile: a command line that starts
# with redis-server (compose.yaml's, or the image's default) gets
# --protected-mode no before its own arguments, which may override it;
# any other command runs as given (redis-cli for the health check).
set -eu
if [ "${1:-}" = redis-server ]; then
	shift
	exec redis-server --protected-mode no "$@"
fi
exec "$@"
