"""Where the cluster state comes from and how it changes: snapshot files, list+watch informers,
the binder, and the gate that holds the state still while a large request reads it. The state
itself (`ClusterState`) is pure and lives in the engine."""
