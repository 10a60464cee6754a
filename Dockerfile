# syntax=docker/dockerfile:1
# TAMSK online: the live server (and the bot client) in a small runtime image.
#
#   docker build -t tamsk-server .
#   docker run -d --name tamsk -p 7878:7878 -v tamsk-data:/data --stop-timeout 45 tamsk-server
#
# See docs/OPERATIONS.md.

# ---- build ---------------------------------------------------------------------------
FROM rust:1-slim-bookworm AS build
# make: the server's allocator crate (tikv-jemalloc-sys) builds jemalloc with it (gcc is in
# the image already).
RUN apt-get update \
    && apt-get install -y --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The whole workspace (every member's manifest is needed to resolve it); .dockerignore
# keeps target/ and .git out.
COPY . .
# No debug info and stripped symbols in the image; the registry and target directory are
# cached between builds (BuildKit), so the binaries are copied out in the same step.
ENV CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_RELEASE_STRIP=symbols
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p tamsk-server --bins \
    && mkdir -p /out \
    && cp target/release/tamsk-server target/release/tamsk-bot /out/

# ---- runtime -------------------------------------------------------------------------
FROM debian:bookworm-slim
# curl only for the health check.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 tamsk \
    && useradd --system --uid 10001 --gid tamsk --home-dir /data --shell /usr/sbin/nologin tamsk \
    && mkdir -p /data \
    && chown tamsk:tamsk /data
COPY --from=build /out/tamsk-server /out/tamsk-bot /usr/local/bin/
USER tamsk:tamsk
WORKDIR /data
# The SQLite database (and its -wal/-shm files) live here: mount a volume.
VOLUME ["/data"]
ENV TAMSK_LISTEN=0.0.0.0:7878 \
    TAMSK_DB=/data/tamsk.db \
    TAMSK_LOG_JSON=1 \
    TAMSK_DRAIN_MS=30000
EXPOSE 7878
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD curl -fsS http://127.0.0.1:7878/healthz || exit 1
# SIGTERM: stop matching, tell every client, drain live games for TAMSK_DRAIN_MS, suspend the
# rest (resumed at the next start), exit 0. Give `docker stop` more time than the drain (--stop-timeout).
STOPSIGNAL SIGTERM
ENTRYPOINT ["tamsk-server"]
