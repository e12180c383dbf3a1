"""Benchmarks for the extender: payload generator (`bench.generate`) and runner (`bench.run`).

Nothing here is imported by the product or asserted by the test suite on a number.
"""
