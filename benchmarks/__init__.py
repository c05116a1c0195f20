"""Benchmarks: the scripts behind every figure in docs/benchmarks.md (DESIGN §7).

Run each from the repository root as a module, e.g. `.venv/bin/python -m benchmarks.accuracy`;
`--help` lists a script's options. This package is not part of the installed wheel (pyproject.toml
ships `monitor`, `dashboard` and `migrations` only), and neither `monitor` nor `dashboard` may
import it (an import-linter contract in pyproject.toml).
"""
