"""scheduler-plugins' Trimaran: load-aware scorers over measured node utilisation.

TargetLoadPacking, LoadVariationRiskBalancing and LowRiskOverCommitment score nodes from the
cluster's node load metrics (`TrimaranStore.metrics`, in load-watcher's JSON shape: a
background refresher fills it in live mode, `evaluate(..., metrics=...)` and the simulator's
utilisation replay otherwise), never fetching anything on the request path. A node absent
from the metrics, or with none, scores MinNodeScore (0), as upstream. All three are Score
plugins without NormalizeScore: the prioritize verb's scorers.
"""

from __future__ import annotations

from extender.engine.plugins.trimaran.loadvariationriskbalancing import (
    LoadVariationRiskBalancing,
)
from extender.engine.plugins.trimaran.lowriskovercommitment import LowRiskOverCommitment
from extender.engine.plugins.trimaran.targetloadpacking import TargetLoadPacking

__all__ = ["LoadVariationRiskBalancing", "LowRiskOverCommitment", "TargetLoadPacking"]
