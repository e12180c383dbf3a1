"""Differential conformance: the engine against kube-scheduler's own Go plugins.

`python -m conformance` builds the oracle (`oracle/main.go`: kube-scheduler's framework
runtime and in-tree registry, from the published `k8s.io/kubernetes` module), generates
clusters and pending pods, and compares what each side says of every node.
"""
