# Dockerfile — streamlab on NVIDIA's CUDA 13 Ubuntu 24.04 images, in two stages.
#   build:   the devel image; the same `make build/streamlab web-vendor` as on a host (the Makefile's
#            steps, nothing of its own: tests/api/test_docker_steps.py checks that)
#   runtime: the runtime image; the binary, the dashboard, the shared libraries the binary links
#            (libcudart is linked statically; libcuda comes from the NVIDIA container runtime)
#
#   docker build -t streamlab .
#   docker run --gpus all -p 8080:8080 -v streamlab:/data -e STREAMLAB_TOKEN=change-me streamlab
#   docker run --gpus all -v $PWD/spec.json:/spec.json:ro streamlab run /spec.json --push http://central:8080
#
# Inside the container streamlab listens on all interfaces, so `serve` needs STREAMLAB_TOKEN (it refuses to
# start without one). The SQLite file is /data/streamlab.db, in the /data volume.

FROM nvidia/cuda:13.0.0-devel-ubuntu24.04 AS build
ARG DEBIAN_FRONTEND=noninteractive
# tests/deps.sh's build packages (gcc make pkg-config libmicrohttpd-dev libjansson-dev libsqlite3-dev nodejs npm)
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc g++ make pkg-config libmicrohttpd-dev libgnutls28-dev \
        libjansson-dev libsqlite3-dev nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make build/streamlab web-vendor
# What the runtime stage takes: the dashboard without node_modules, and CUPTI (loaded with dlopen for
# "timing": "cupti"; the runtime image lacks it).
RUN mkdir -p /out/web /out/cupti \
 && cp -a web/. /out/web/ && rm -rf /out/web/node_modules /out/web/package.json /out/web/package-lock.json \
 && find /usr/local/cuda/ -name 'libcupti.so*' -exec cp -a {} /out/cupti/ \;

FROM nvidia/cuda:13.0.0-runtime-ubuntu24.04
ARG DEBIAN_FRONTEND=noninteractive
# The shared libraries of build/streamlab (ldd), by Ubuntu 24.04 package; curl for the HEALTHCHECK.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjansson4 libsqlite3-0 libgnutls30t64 libgomp1 libstdc++6 \
        libgcc-s1 curl ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin streamlab \
 && mkdir -p /data && chown streamlab:streamlab /data
COPY --from=build /src/build/streamlab /opt/streamlab/bin/streamlab
COPY --from=build /out/web/ /opt/streamlab/web/
COPY --from=build /src/examples/ /opt/streamlab/examples/
COPY --from=build /out/cupti/ /usr/local/cuda/extras/CUPTI/lib64/
ENV PATH=/opt/streamlab/bin:$PATH \
    STREAMLAB_LISTEN=0.0.0.0:8080 \
    STREAMLAB_DB=/data/streamlab.db \
    STREAMLAB_WEB=/opt/streamlab/web \
    STREAMLAB_EXAMPLES=/opt/streamlab/examples \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
VOLUME ["/data"]
WORKDIR /data
USER streamlab
EXPOSE 8080
# The port is STREAMLAB_LISTEN's; the token is sent too, for servers started with --private.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD curl -fsS -o /dev/null -H "Authorization: Bearer ${STREAMLAB_TOKEN:-none}" "http://127.0.0.1:${STREAMLAB_LISTEN##*:}/api/health" || exit 1
ENTRYPOINT ["streamlab"]
CMD ["serve"]
