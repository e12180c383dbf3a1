"""scheduler-plugins' `NetworkOverheadArgs` and `TopologicalSortArgs` (apis/config/v1 names
and defaults: namespaces ["default"], weightsName "UserDefined", networkTopologyName
"nt-default")."""

from __future__ import annotations

from pydantic import Field, field_validator

from extender.engine.args import _Args

DEFAULT_NAMESPACES = ("default",)
DEFAULT_WEIGHTS_NAME = "UserDefined"
DEFAULT_NETWORK_TOPOLOGY_NAME = "nt-default"


def _default_namespaces(namespaces: list[str]) -> list[str]:
    # SetDefaults_*: an empty list means the default namespace.
    return namespaces or list(DEFAULT_NAMESPACES)


class TopologicalSortArgs(_Args):
    #: Where AppGroups are looked up, in order (the first holding the pod's AppGroup wins).
    namespaces: list[str] = Field(default_factory=lambda: list(DEFAULT_NAMESPACES))

    _namespaces = field_validator("namespaces")(classmethod(
        lambda cls, v: _default_namespaces(v)))


class NetworkOverheadArgs(_Args):
    #: Where the AppGroup and the NetworkTopology are looked up, in order.
    namespaces: list[str] = Field(default_factory=lambda: list(DEFAULT_NAMESPACES))
    #: Which of the NetworkTopology's `spec.weights` to use ("UserDefined", "NetperfCosts").
    weights_name: str = Field(default=DEFAULT_WEIGHTS_NAME, alias="weightsName")
    #: The NetworkTopology object's name.
    network_topology_name: str = Field(default=DEFAULT_NETWORK_TOPOLOGY_NAME,
                                       alias="networkTopologyName")

    _namespaces = field_validator("namespaces")(classmethod(
        lambda cls, v: _default_namespaces(v)))
