"""POST /explain: why the pod can or cannot go to each candidate node, plugin by plugin.

The body is a filter or prioritize body (`ExtenderArgs`, `NodeNames` or `Nodes` form). The reply
is `engine.explain.Explanation.to_dict()`, with the candidates in request order: every filter
plugin's verdict on every node, the node's verdict as /filter reports it, and for the feasible
nodes each scorer's raw and normalised score, weight and product, the total and the 0..10 that
/prioritize answers when sent the feasible nodes (as kube-scheduler sends them). Read-only: unlike
filter, it does not remember the pod for a later bind.
"""

from __future__ import annotations

import msgspec
from starlette.responses import Response

from extender.api.body import error_response, json_response
from extender.api.candidates import Candidates
from extender.api.observe import RequestRecord
from extender.api.reading import explain_request
from extender.api.runtime import Runtime
from extender.engine.cluster import ClusterState
from extender.engine.evaluate import status_dict
from extender.engine.explain import Explanation, NodeExplanation, explain_nodes
from extender.engine.profile import Profile
from extender.model.pod import PodView

error_reply = error_response

_encoder = msgspec.json.Encoder()


async def handle(runtime: Runtime, body: bytes, record: RequestRecord) -> Response:
    request = explain_request(runtime, body, record)
    explanation = explain_candidates(runtime.profile, request.pod, request.candidates,
                                     runtime.state)
    record.details["feasible"] = len(explanation.feasible)
    return json_response(_encoder.encode(explanation.to_dict()))


def explain_candidates(profile: Profile, pod: PodView, candidates: Candidates,
                       state: ClusterState) -> Explanation:
    """The explanation of a request's candidates, in request order (also `extender explain`'s
    for a request body). Nodes the extender could not use (unknown names, invalid Node
    objects) carry the filter verb's reason for them and no plugin verdicts."""
    explanation = explain_nodes(profile, pod, candidates.infos, state)
    explained = explanation.nodes
    explanation.nodes = {
        name: explained.get(name) or NodeExplanation([], status_dict(candidates.rejected[name]))
        for name in dict.fromkeys(candidates.names)}
    return explanation
