"""Filter plugins, one per module, named as in kube-scheduler."""
