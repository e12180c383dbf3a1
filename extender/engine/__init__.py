"""The pure scheduling engine: filters, scorers, preemption and the policy model. No I/O.

`evaluate(objects, pod, policy, nodes, metrics)` is its public in-process API.
"""

from extender.engine.evaluate import Evaluation, EvaluationError, evaluate

__all__ = ["Evaluation", "EvaluationError", "evaluate"]
