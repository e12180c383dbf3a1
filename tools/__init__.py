"""Maintainer scripts (not shipped): generators of the package's data files."""
