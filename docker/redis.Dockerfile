# A Redis image for docker/compose.yaml made from Debian 12's redis-server
# package, for a machine no registry answers (scripts/test-compose.sh builds
# it from the same debootstrap base as rigd's image and tags it redis:7.0,
# the name compose.yaml uses). With a registry, the official redis:7.0 is
# what compose pulls and this file is not needed. Debian 12's redis-server
# is 7.0 too, and it is run the way the official image runs it: as the
# redis user, in /data, with protected mode off (the official image builds
# Redis with that default), since compose's network is what reaches it.
FROM debian:12-slim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends redis-server \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
 && mkdir -p /data && chown redis:redis /data
COPY docker/redis-entrypoint.sh /usr/local/bin/redis-entrypoint
WORKDIR /data
USER redis
VOLUME /data
EXPOSE 6379
ENTRYPOINT ["redis-entrypoint"]
CMD ["redis-server"]
