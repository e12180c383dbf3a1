"""A kube-scheduler extender: filter, prioritize, preempt and bind, with a scheduling simulator."""

__version__ = "0.1.0"
