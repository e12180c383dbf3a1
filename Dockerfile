# syntax=docker/dockerfile:1
# The extender image: `docker build -t ghcr.io/example/scheduler-extender:0.1.0 .`
# Stage 1 builds the wheel and installs it with its dependencies into a virtualenv;
# stage 2 copies only that virtualenv onto a fresh slim Python, so no source tree, build
# backend or compiler reaches the final image.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY extender ./extender
# pip picks the binary wheels that uvloop, httptools, msgspec and pydantic-core publish
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
# The embedded defaults `extender serve` looks for in its working directory: the default policy
# and the demo cluster, so a bare `docker run` answers; Kubernetes passes --policy/--in-cluster.
WORKDIR /app
COPY config/policy.yaml config/policy.yaml
COPY config/examples/cluster.json config/examples/cluster.json
USER 10001:10001
EXPOSE 8888
# For `docker run`; Kubernetes ignores it and uses the Deployment's probes.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8888/healthz', timeout=2)"]
ENTRYPOINT ["extender"]
CMD ["serve", "--host", "0.0.0.0"]
