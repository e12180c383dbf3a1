"""The pure scheduling engine: filters, scorers, preemption and the policy model. No I/O."""
