"""Cross-node plugins, one folder each (PreFilter over the whole cluster, Filter, Score)."""
