# syntax=docker/dockerfile:1
# The extender image: `docker build -t scheduler-extender:0.1.0 .` (the name
# manifests/components/images maps the manifests' placeholder to; docs/operations.md, Images)
# Stage 1 builds the wheel and installs it with its base dependencies (no extras: the `plot`
# extra's matplotlib is for the simulator's chart, never the server) into a virtualenv;
# stage 2 copies only that virtualenv onto a fresh slim Python, so no source tree, build
# backend or compiler reaches the final image. The default policy and the demo cluster are
# package data (extender/data/), inside the installed package.

# Pinned by digest (the multi-arch index of python:3.11-slim-bookworm, Python 3.11.16, as
# recorded by docker-library/repo-info): a rebuild gets the same base. To move to a newer
# patch release: `docker buildx imagetools inspect python:3.11-slim-bookworm` and copy the digest.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:0bee7276f83efd4a1ee05bbbf4281d95ed28e079220a9457f25a93e3f1e3c31b

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY extender ./extender
# pip picks the binary wheels that uvloop, httptools, msgspec, pydantic-core and xxhash publish
# for manylinux, so nothing is compiled here either.
RUN pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv --without-pip /opt/venv \
 && pip --python /opt/venv/bin/python install --no-cache-dir /wheels/*.whl

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="scheduler-extender" \
      org.opencontainers.image.description="kube-scheduler extender: filter, prioritize, preempt, bind" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# A fixed numeric user, so Kubernetes can verify runAsNonRoot without a passwd lookup.
RUN groupadd --system --gid 10001 extender \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin extender
COPY --from=build /opt/venv /opt/venv
# No WORKDIR or data files: a bare `docker run` serves the packaged defaults (policy and demo
# cluster, found from any working directory); Kubernetes passes --policy and --in-cluster.
USER 10001:10001
# 8888: the scheduler verbs (plain HTTP, or TLS / mutual TLS with --tls-*); 8081: /healthz and
# /readyz over plain HTTP only (--health-port), so probes need no client certificate.
EXPOSE 8888 8081
# For `docker run`; Kubernetes ignores it and uses the Deployment's probes. It probes the plain
# health port, so it works whether 8888 serves HTTP, TLS or mutual TLS: keep --health-port 8081
# when you pass your own arguments.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8081/healthz', timeout=2)"]
ENTRYPOINT ["extender"]
CMD ["serve", "--host", "0.0.0.0", "--health-port", "8081"]
