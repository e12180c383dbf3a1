"""A real control plane on one machine, for tests and for trying the extender against a real
kube-scheduler: `build.py` builds the upstream programs from Go modules into a cache,
`controlplane.py` runs them on loopback (`pki.py` makes their certificates), `agent.py` stands
in for kubelets, `commands.py` is `extender sandbox build|up|down|status`."""
