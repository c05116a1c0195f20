"""`python -m monitor.simulator [--port 0] …`: the simulator without the main CLI."""

from monitor.childproc import honour_parent
from monitor.simulator.run import run_simulator

honour_parent()

raise SystemExit(run_simulator())
