"""Typed, immutable views of the Kubernetes objects the engine reads."""
