"""Every `firsttoken` call builds the parser of every command (monitor/cli.py), so a command module
must keep its heavy imports inside `run`. One that did not (`run` importing the whole service at
the top) made `firsttoken --help` and every short command take 1.9 s instead of 0.2 s."""

from __future__ import annotations

import subprocess
import sys

# Libraries a command loads when it runs, never to parse its arguments.
HEAVY = ("sqlalchemy", "httpx", "numpy", "psycopg", "pydantic", "jinja2", "apscheduler", "plotly", "streamlit")


def test_building_the_parser_loads_no_heavy_library():
    code = (
        "import sys\n"
        "from monitor.cli import build_parser\n"
        "build_parser()\n"
        "print(' '.join(sorted({name.split('.')[0] for name in sys.modules})))\n"
    )
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert "argparse" in loaded  # the probe of sys.modules works
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_help_answers_without_loading_the_service():
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "monitor", "--help"], capture_output=True, text=True, check=True
    )
    assert "firsttoken" in out.stdout and "run" in out.stdout
    assert "monitor.agent.service" not in out.stderr
