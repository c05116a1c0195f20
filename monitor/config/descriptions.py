"""One line for every key of `firsttoken.yaml`, put into its JSON Schema as `description`.

Editors show it on hover, and the site's configuration reference (generated from the schema at
build time) prints it beside the key's type and default. They live here, apart from the models in
`schema.py`, so the models stay readable; `tests/config/test_descriptions.py` fails naming any key
added without one. Keyed by the schema's `$defs` title (`firsttoken.yaml` for the top level), then
the key as written in YAML. `NOTIFIER` holds the keys every notifier type shares.
"""

from __future__ import annotations

ROOT = "firsttoken.yaml"

NOTIFIER = {
    "type": "Which notifier module delivers this entry (one of the discovered notifier types).",
    "name": "The notifier's name, unique among `notifiers:`.",
    "severities": "Only alerts of these severities are sent here; empty sends every severity.",
    "timeout": "How long one delivery may take before it counts as failed and is retried.",
}

DESCRIPTIONS: dict[str, dict[str, str]] = {
    ROOT: {
        "database": "SQLAlchemy URL of the sample store (`sqlite:///firsttoken.db` when unset); "
        "`FIRSTTOKEN_DATABASE_URL` overrides it.",
        "agent": "This probe agent's vantage point, stored with every sample; `FIRSTTOKEN_AGENT` overrides it.",
        "defaults": "Schedule, timeouts and concurrency caps for every target unless a provider or check says otherwise.",
        "prompts": "The prompts to send, by name: messages, a file or a synthetic filler, plus request options.",
        "providers": "The APIs to probe, by name: protocol, credentials, regions and models.",
        "checks": "What to probe: each entry expands to providers × models × regions × prompts.",
        "alerts": "Alert rules evaluated by the leader over the stored samples.",
        "notifiers": "Where alert notifications go (Slack, Teams, email, webhook, PagerDuty, Alertmanager, apprise, log, …).",
        "silences": "Silences from the file: they mute notifications, never measurement.",
        "alerting": "Timings of alert evaluation and notification delivery; read when `firsttoken run` starts.",
        "prices": "USD per million tokens, per `provider/model`: gives each sample's `cost_usd`.",
        "budget": "A limit on the probes' projected monthly spend, checked once as `run` starts (not a running cap).",
        "retention": "How long raw samples and rollups are kept.",
        "dashboard_url": "The dashboard's public address: notifications link to the alert's own view there.",
        "public_url": "Where others reach `firsttoken run --listen` (e.g. `https://firsttoken.internal:9464`): "
        "notifications link to the alert's chart and one-click silence there, signed; unset, they carry neither.",
        "slos": "Service level objectives: what a good probe is, the share of good probes a period must hold, "
        "and burn-rate alerts on its error budget.",
        "status_site": "The public status site (`/status` on run's listen address, `firsttoken status export`).",
        "smtp": "The mail server for status subscriptions, email notifiers and reports.",
        "maintenance": "Planned work: pages muted, probes marked, SLO and SLA minutes left out (one-off or RRULE).",
        "reports": "Reports mailed on a schedule by the leader through `smtp:` (the weekly provider report).",
        "inhibit": "Which firing alerts make others redundant (kept, delivered nowhere); unset: an error-rate page "
        "inhibits latency and TPS alerts of the same provider and region; `[]`: none.",
    },
    "StatusSite": {
        "title": "The site's title.",
        "url": "Its public base URL, for links in feeds and mails.",
        "components": "Target-id globs shown, grouped provider → model (default: all).",
        "publish": "`auto`: incidents drafted from confirmed pages go public at once; `manual`: they wait for "
        "`firsttoken incident publish`.",
        "history_days": "Days of daily bars and uptime shown (default 90).",
    },
    "Smtp": {
        "host": "The SMTP server.",
        "port": "Its port (587 for STARTTLS, 465 for TLS).",
        "starttls": "Upgrade the connection with STARTTLS (default: yes unless `tls`).",
        "tls": "TLS from the first byte (port 465).",
        "username": "Login name, when the server wants one.",
        "password": "Login password, from the environment (`${SMTP_PASSWORD}`).",
        "from": "The From: address of every mail.",
        "timeout": "How long to wait for the server.",
    },
    "Contract": {
        "name": "The contract's name in the SLA report (default: the provider's, with its match).",
        "match": "Which of the provider's targets it covers, by `model` and/or `region` (default: all).",
        "uptime": "The uptime commitment: when a minute is down, and the credits below each uptime.",
        "latency": "The latency commitment: when a minute is fast enough, and the share of minutes that must be.",
        "claim_days": "Days after the period's end within which a credit claim must be filed (default 30).",
    },
    "CreditTier": {
        "below": "A month's uptime under this share ...",
        "credit": "... earns this share of the bill back (the lowest `below` reached counts).",
    },
    "UptimeTerms": {
        "minute_down": "When a minute counts as down.",
        "credits": "Service-credit tiers, e.g. `[{below: 99.9%, credit: 10%}, {below: 99%, credit: 25%}]`.",
        "objective": "The committed uptime (default: the highest tier's `below`).",
    },
    "MinuteDown": {
        "error_rate": "A minute is down when at least this share of its probes failed with one of `kinds` (default 5%).",
        "kinds": "The error kinds that count against the provider (default server_error, timeout, connect, "
        "stream_error; auth, rate limits and answer checks never do).",
    },
    "LatencyTerms": {
        "minute_ok": "When a minute meets the latency promise.",
        "objective": "The share of measured minutes that must meet it (default 99%).",
    },
    "MinuteOk": {
        "tps_at_least": "The minute's decode speed (tokens/s, median of its successful probes) at least this.",
        "ttft_at_most": "The minute's TTFT (median of its successful probes) at most this, e.g. `2s`.",
    },
    "ReportEntry": {
        "name": "The report's name, unique among `reports:`; it keys the once-per-period record.",
        "to": "The addresses the report is mailed to.",
        "every": "When it is sent: a weekday and a time, e.g. `MON 09:00` (in `timezone`).",
        "timezone": "The IANA time zone of `every` and of the week the report covers (default UTC).",
        "providers": "The providers it covers (default: all).",
        "kind": "Which report: `weekly` (per provider uptime, TTFT, TPS against the week before, incidents, "
        "SLO budgets, spend).",
        "attach_pdf": "Also attach the report as a PDF (default: no).",
    },
    "MaintenanceWindow": {
        "name": "The window's name, in the site and the alerts it mutes.",
        "match": "Which targets it covers, by provider, model, region, prompt (globs).",
        "rrule": "A recurring window's RFC 5545 rule, e.g. `FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0`.",
        "duration": "How long each occurrence lasts.",
        "timezone": "The IANA time zone the rule's hours are in (default UTC).",
        "start": "A one-off window's start.",
        "end": "A one-off window's end.",
        "note": "What the status site says during the window.",
    },
    "InhibitRule": {
        "name": "A name for the rule, in logs and docs.",
        "source": "Matchers on the firing alert that inhibits.",
        "target": "Matchers on the alerts it inhibits.",
        "equal": "Scope labels (provider, model, region, prompt, agent) that must be the same on both.",
    },
    "AlertMatch": {
        "rule": "Alert rule names (an SLO's alert is `slo:NAME`), one or a list.",
        "slo": "SLO names, one or a list.",
        "metric": "Metrics, one or a list; an SLO alert's are the metrics its `good:` bounds (else error_rate).",
        "kind": "regression, threshold, change or slo; one or a list.",
        "severity": "Severities, one or a list (page, ticket, …).",
    },
    "Defaults": {
        "interval": "Time between two probes of one target (`90s`, `5m`, `1h` or seconds).",
        "timeout": "Longest a whole probe may take before it is a `timeout` error.",
        "ttft_timeout": "Longest wait for the first token before the probe is a `timeout` error.",
        "cache_bust": "Start each prompt with a short random nonce so provider prompt caches do not flatter TTFT.",
        "max_concurrency": "Probes in flight on this agent: a number, or `auto` (sized from the schedule).",
        "max_per_provider_region": "Probes in flight against one provider region: a number, or `auto`.",
    },
    "Provider": {
        "contract": "What the provider owes (uptime, latency, credits, claim window), checked by `firsttoken "
        "report sla`: one contract, or a list narrowed by `match: {model, region}`.",
        "proxy": "Egress proxy for this provider's probes (`http://user:pass@host:port`, credentials redacted), "
        "or `direct` to bypass `HTTPS_PROXY`/`HTTP_PROXY`; unset: the environment's proxy, as curl reads it.",
        "protocol": "The wire protocol the provider speaks (one module of `monitor/protocols/`).",
        "api_key": "The API key, as `${VAR}` from the environment; never stored, logged or shown.",
        "headers": "Extra request headers (values are treated as secrets).",
        "regions": "Region name → base URL; each region is probed as its own target.",
        "models": "Model ids to probe; `{name: <id>, as: <canonical name>}` compares one model across providers.",
        "params": "Extra request-body fields, merged into every request (e.g. pin an OpenRouter route).",
        "options": "Protocol-specific settings (see the protocol's page).",
        "cache_bust": "Overrides `defaults.cache_bust` for this provider.",
        "interval": "Overrides `defaults.interval` for this provider's targets.",
        "timeout": "Overrides `defaults.timeout` for this provider's targets.",
        "ttft_timeout": "Overrides `defaults.ttft_timeout` for this provider's targets.",
        "status_page": "URL of the provider's Statuspage v2 `summary.json`: official incidents beside ours.",
        "reasoning": "Reasoning effort or budget for every prompt sent to this provider (a prompt's own wins).",
    },
    "ModelEntry": {
        "name": "The model id the provider expects.",
        "as": "The canonical name it is compared and routed under across providers.",
    },
    "Check": {
        "providers": "Names of the providers this check probes.",
        "prompts": "Names of the prompts this check sends.",
        "models": "Only these models; empty means every model of each provider.",
        "regions": "Only these regions; empty means every region.",
        "interval": "Overrides the interval for this check's targets.",
        "timeout": "Overrides the whole-probe timeout for this check's targets.",
        "ttft_timeout": "Overrides the first-token timeout for this check's targets.",
        "agents": "Only these agents run the check; empty means every agent.",
    },
    "Prompt": {
        "messages": "Chat messages (`role`, `content`) sent as the prompt.",
        "cache": "Probe the prompt cache: a stable prefix, marked where the protocol needs it, probed each round "
        "as a cold request and a warm one (`cache_state`).",
        "file": "A text file (relative to the config file) sent as the user message.",
        "system": "A system prompt put before the messages.",
        "max_tokens": "Most output tokens to ask for.",
        "temperature": "Sampling temperature; `0` also fingerprints the answer (`answer_fingerprint`).",
        "tools": "OpenAI-style function tools offered to the model (translated per protocol).",
        "tool_choice": "`auto`, `none`, `required` or `{name: fn}` to force one function.",
        "response_format": "Ask for structured output matching a JSON Schema.",
        "synthetic": "A generated filler of a given token count before the question (long-context probes).",
        "reasoning": "Reasoning effort or budget for this prompt.",
        "expect": "Checks on the answer; a failed one makes the sample an `assertion` error.",
    },
    "MessageSpec": {
        "role": "`system`, `user` or `assistant`.",
        "content": "The message text.",
    },
    "Tool": {
        "type": "Always `function`.",
        "function": "The function's name, description and JSON Schema parameters.",
    },
    "Function": {
        "name": "The function name the model calls.",
        "description": "What the function does, for the model.",
        "parameters": "JSON Schema of the function's arguments.",
    },
    "ResponseFormat": {
        "json_schema": "The JSON Schema the answer must match.",
        "name": "The schema's name, sent where the API wants one.",
        "strict": "Ask the API to enforce the schema strictly.",
    },
    "Synthetic": {
        "tokens": "Filler plus question, in o200k tokens (1 to 200,000).",
        "seed": "Seed of the filler text: the same seed gives the same text.",
    },
    "Reasoning": {
        "effort": "`low`, `medium` or `high` (mapped to a budget where an API wants one).",
        "budget_tokens": "A thinking budget in tokens (mapped to the nearest effort where an API wants one).",
    },
    "Expect": {
        "contains": "A string or list: every one must appear in the answer.",
        "not_contains": "A string or list: none may appear in the answer.",
        "regex": "A Python regular expression searched in the answer.",
        "json_schema": "The answer must parse as JSON and validate against this schema.",
        "tool": "The answer must call this function (`name`), optionally with `arguments` matching a schema.",
        "max_chars": "Most characters the answer may have (0: no answer text at all).",
        "min_tokens": "Fewest answer tokens (reasoning excluded) the answer must have.",
    },
    "ToolExpect": {
        "name": "The function the answer must call.",
        "arguments": "JSON Schema its arguments must match.",
    },
    "AlertRule": {
        "confirm": "How many vantage points (agents) must see the condition before it is the target's: "
        "`{agents: N}` or `{share: 50%}`; default more than half of those that probed it, at least 2 of 2 or more.",
        "vantage_severity": "Severity of an alert seen from fewer agents than the quorum (scoped to the agent): "
        "`ticket` unless you say otherwise.",
        "name": "The rule's name, shown in notifications and on the dashboard.",
        "cache_state": "`warm`: judge only the warm half of cache probes (a warm `ttft_ms` regression); "
        "otherwise their cold half counts, as for every other target.",
        "metric": "`ttft_ms`, `ttft_answer_ms`, `tps`, `total_ms`, `error_rate`, `cache_hit_ratio`; for `change`, a label "
        "such as `served_by` or `answer_fingerprint`.",
        "kind": "`regression` (against the series' own baseline), `threshold` or `change`.",
        "severity": "Free-form severity (`page`, `ticket`, …) that notifiers filter on.",
        "min_change": "Regression: the relative shift that counts (`50%`).",
        "baseline_window": "Regression: how far back the baseline reaches.",
        "min_duration": "Regression: how long a shift must have held before it pages (`10m` unless set); a run of "
        "slow probes shorter than this is never a page.",
        "percentile": "Threshold: the percentile of the metric compared (latency and tps).",
        "above": "Threshold: fire above this (ms, tokens/s or a rate such as `20%`).",
        "below": "Threshold: fire below this.",
        "window": "Threshold: the window the percentile or error rate is taken over.",
        "min_samples": "Fewest samples in the window for the rule to judge.",
        "for_evaluations": "Consecutive bad evaluations before pending becomes firing.",
        "resolve_after": "Consecutive good evaluations before firing becomes resolved.",
        "repeat_interval": "How often a firing alert is notified again.",
        "match": "Only targets whose labels fit these globs.",
        "runbook": "A URL of what on-call should do when it fires, linked from every notification.",
    },
    "Match": {
        "provider": "A glob on the provider name.",
        "model": "A glob on the model.",
        "region": "A glob on the region.",
        "prompt": "A glob on the prompt name.",
    },
    "Silence": {
        "match": "Label globs (`provider`, `model`, `region`, `prompt`) of the targets muted.",
        "until": "When the silence ends (UTC timestamp).",
        "starts": "When the silence starts (default: now).",
        "reason": "Why, for the people reading the Alerts page.",
    },
    "Alerting": {
        "evaluate_every": "Time between two evaluation rounds.",
        "deliver_every": "How often the notification outbox is drained.",
        "settle": "How long samples may arrive late; younger ones wait for the next round.",
        "group_wait": "How long a firing target waits for its provider group to form.",
        "retry_after": "First retry of a failed notification; doubles up to `retry_max`.",
        "retry_max": "Longest wait between two retries.",
        "give_up_after": "A notification undelivered this long is marked failed.",
    },
    "Price": {
        "input": "USD per million input tokens.",
        "output": "USD per million output tokens (reasoning tokens are output).",
        "cached_input": "USD per million input tokens read from the provider's prompt cache.",
        "cache_write": "USD per million input tokens written to the provider's prompt cache.",
    },
    "Budget": {
        "monthly_usd": "The projected monthly spend allowed.",
        "action": "When the projection exceeds it as `run` starts: `warn` (one line, then run) or `refuse` (exit 2). Probes are never stopped once running.",
    },
    "Retention": {
        "raw": "How long raw samples are kept.",
        "rollups": "How long hourly and daily rollups are kept.",
    },
    "WebhookConfig": {
        "url": "Where the JSON body is POSTed.",
        "secret": "HMAC key: the body is signed in `X-Firsttoken-Signature`.",
        "headers": "Extra request headers (values are treated as secrets).",
    },
    "PagerDutyConfig": {
        "routing_key": "The Events API v2 integration key (a secret).",
        "url": "The Events API endpoint.",
    },
    "AlertmanagerConfig": {
        "url": "One Alertmanager URL, or a list for a cluster (API v2).",
        "resend_every": "How often a firing alert is re-posted so Alertmanager never times it out.",
    },
    "AppriseConfig": {
        "urls": "Apprise URLs (they carry their tokens: treated as secrets).",
    },
    "LogNotifierConfig": {},
    "SlackConfig": {
        "url": "An incoming webhook URL (a secret: its path is the token); or give `token` and `channel`.",
        "token": "A bot token (`xoxb-…`, a secret) posting with chat.postMessage to `channel`.",
        "channel": "The channel the bot posts to (`#name` or an id); with `token` only.",
        "api_url": "Slack's Web API base for `token` (default https://slack.com/api).",
    },
    "TeamsConfig": {
        "url": "The Teams Workflows webhook URL (a secret: it carries its signature).",
    },
    "EmailConfig": {
        "to": "The addresses each alert mail goes to, through the `smtp:` section.",
    },
    "Confirm": {
        "agents": "At least this many vantage points (capped at the number that probed the target).",
        "share": "At least this share of the vantage points that probed the target within the rule's window.",
    },
    "Slo": {
        "name": "The SLO's name, unique among `slos:`: its alerts are `slo:<name>`.",
        "objective": "The share of good probes the period must hold, above 0% and below 100% (`99.5%`).",
        "match": "Which targets count, by the alert rules' selectors (`provider`, `model`, `region`, `prompt` globs).",
        "good": "The bounds a good probe meets besides being ok; omitted, a probe is good when it is ok.",
        "period": "The error budget's rolling window, at least `1h` (default `30d`).",
        "per": "One budget per `target`, `provider`, `model` (canonical, across providers) or `all` matched.",
        "repeat_interval": "How often a firing burn-rate alert is notified again (default 4h), as an alert rule's.",
        "runbook": "A URL of what on-call should do when it burns, linked from every notification.",
    },
    "Good": {
        "ttft_ms": "A bound on time to first token (`below:`/`above:`, milliseconds or a duration).",
        "ttft_answer_ms": "A bound on time to the first answer token (after any reasoning).",
        "total_ms": "A bound on the whole request, first byte sent to last byte read.",
        "tps": "A bound on decode tokens per second.",
        "checks": "Whether failing the prompt's `expect:` answer checks makes a probe bad (default true).",
    },
    "LatencyBound": {
        "below": "Good when strictly below this (milliseconds or a duration).",
        "above": "Good when strictly above this (milliseconds or a duration).",
    },
    "RateBound": {
        "below": "Good when strictly below this many tokens per second.",
        "above": "Good when strictly above this many tokens per second.",
    },
}


def describe(def_title: str, key: str, *, notifier: bool) -> str | None:
    """The description of `key` in the `$defs` entry titled `def_title` (or the top level)."""
    found = DESCRIPTIONS.get(def_title, {}).get(key)
    return found if found is not None or not notifier else NOTIFIER.get(key)
