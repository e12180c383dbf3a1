"""A node-local filter: nodes whose name is longer than `maxLength` do not fit."""

from __future__ import annotations

from pydantic import Field

from extender.engine.args import _Args
from extender.engine.events import NODE, ActionType, ClusterEvent
from extender.engine.framework import NodeCheck, unresolvable
from extender.engine.registry import PluginRecord, Purity
from extender.model.pod import PodView

NAME = "ToyNameLength"


class ToyNameLengthArgs(_Args):
    max_length: int = Field(default=8, ge=1, alias="maxLength")


class ToyNameLength:
    name = NAME

    def __init__(self, args: ToyNameLengthArgs) -> None:
        self.max_length = args.max_length

    def prepare(self, pod: PodView) -> NodeCheck | None:
        status = unresolvable(NAME, f"node name longer than {self.max_length}")
        limit = self.max_length
        return lambda node: None if len(node.node.name) <= limit else status


RECORD = PluginRecord(NAME, ToyNameLengthArgs, filter=lambda a, v: ToyNameLength(a),
                      events=(ClusterEvent(NODE, ActionType.ADD),),
                      purity=Purity.NODE_VIEW)
