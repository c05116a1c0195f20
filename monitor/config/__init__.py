"""The configuration (DESIGN §3): `load_config("firsttoken.yaml")` -> a frozen `Config`, or a
`ConfigError` with every problem, one `path.in.file: message` line each.

    loader        file -> YAML -> ${VAR} -> schema -> matrix and references -> Config
    document      YAML text -> tree            interpolation  ${VAR} in string values
    schema        the sections of the file     prompts / notifiers  their own sections
    fields        field types and @spec        errors         pydantic's errors in our words
    matrix        checks -> targets            scopes         references between sections
    values        Config and Target, as the monitor reads them

`firsttoken schema` prints the JSON Schema of the file (`json_schema()`).
"""

from monitor.config.errors import ConfigError
from monitor.config.loader import DEFER, RESOLVE, load_config, load_config_text, secrets_policy
from monitor.config.notifiers import NotifierConfig, notifier_types
from monitor.config.prompts import Expect, Prompt, Reasoning, ResponseFormat, Synthetic, ToolExpect
from monitor.config.schema import (
    CHANGE_METRICS,
    DAY,
    HOUR,
    LATENCY_METRICS,
    METRICS,
    MINUTE,
    SCOPE_LABELS,
    Alerting,
    AlertRule,
    Budget,
    Check,
    Defaults,
    Price,
    Provider,
    Retention,
    Silence,
    registered_protocols,
    scope_matches,
)
from monitor.config.values import Config, Target

# fmt: off
__all__ = [
    "CHANGE_METRICS",
    "DAY",
    "DEFER",
    "HOUR",
    "LATENCY_METRICS",
    "METRICS",
    "MINUTE",
    "RESOLVE",
    "SCOPE_LABELS",
    "AlertRule",
    "Alerting",
    "Budget",
    "Check",
    "Config",
    "ConfigError",
    "Defaults",
    "Expect",
    "NotifierConfig",
    "Price",
    "Prompt",
    "Provider",
    "Reasoning",
    "ResponseFormat",
    "Retention",
    "Silence",
    "Synthetic",
    "Target",
    "ToolExpect",
    "load_config",
    "load_config_text",
    "notifier_types",
    "registered_protocols",
    "scope_matches",
    "secrets_policy",
]
# fmt: on

# The built-in notifier configs live in their notifier's module (monitor/alerts/notifiers/); they are
# re-exported here, looked up on first use, so importing the config imports no notifier.
_NOTIFIER_CONFIGS = (
    "AlertmanagerConfig",
    "AppriseConfig",
    "EmailConfig",
    "LogNotifierConfig",
    "PagerDutyConfig",
    "SlackConfig",
    "TeamsConfig",
    "WebhookConfig",
)
__all__ += _NOTIFIER_CONFIGS


def __getattr__(name: str) -> type[NotifierConfig]:
    found = {cls.__name__: cls for cls in notifier_types().values()}
    if name in _NOTIFIER_CONFIGS and name in found:
        return found[name]
    raise AttributeError(f"module 'monitor.config' has no attribute {name!r}")
