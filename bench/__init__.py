"""Benchmarks: run them with ``python -m bench.<name>``; they print medians and ratios."""
