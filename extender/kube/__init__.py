"""Kubernetes API access on httpx: credentials, list/watch streams, the binding call."""

from extender.kube.client import (
    ApiError,
    GoneError,
    KubeClient,
    KubeError,
    ListPage,
    TransportError,
    WatchEvent,
)
from extender.kube.config import ClusterConfig, ConfigError, in_cluster_config, load_kubeconfig

__all__ = [
    "ApiError",
    "ClusterConfig",
    "ConfigError",
    "GoneError",
    "KubeClient",
    "KubeError",
    "ListPage",
    "TransportError",
    "WatchEvent",
    "in_cluster_config",
    "load_kubeconfig",
]
