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
from monitor.config.loader import load_config, load_config_text
from monitor.config.notifiers import (
    NOTIFIER_TYPES,
    PAGERDUTY_URL,
    AlertmanagerConfig,
    AppriseConfig,
    LogNotifierConfig,
    NotifierConfig,
    PagerDutyConfig,
    WebhookConfig,
)
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

__all__ = [
    "CHANGE_METRICS", "DAY", "HOUR", "LATENCY_METRICS", "METRICS", "MINUTE", "NOTIFIER_TYPES", "PAGERDUTY_URL",
    "SCOPE_LABELS", "AlertRule", "Alerting", "AlertmanagerConfig", "AppriseConfig", "Budget", "Check", "Config",
    "ConfigError", "Defaults", "Expect", "LogNotifierConfig", "NotifierConfig", "PagerDutyConfig", "Price", "Prompt",
    "Provider", "Reasoning", "ResponseFormat", "Retention", "Silence", "Synthetic", "Target", "ToolExpect",
    "WebhookConfig", "load_config", "load_config_text", "registered_protocols", "scope_matches",
]  # fmt: skip
