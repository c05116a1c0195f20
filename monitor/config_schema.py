"""Deprecated: the config moved to the `monitor.config` package; import from there.

Kept only so modules not yet rewritten keep importing (`monitor.agent.service`,
`monitor.alerts.engine`, `monitor.alerts.silences`, `monitor.commands.backtest`
and some tests); delete once none does.
"""

from monitor.config import *  # noqa: F403
from monitor.config import __all__  # noqa: F401
