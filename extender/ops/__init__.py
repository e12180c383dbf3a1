"""Deployment and operations: scheduler configuration files, TLS for the HTTP server."""
