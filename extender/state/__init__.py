"""Cluster state: node views, pods by node, totals, PDBs, PriorityClasses, and their sources."""
