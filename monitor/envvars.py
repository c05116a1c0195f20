"""Every `FIRSTTOKEN_*` environment variable, in one place.

The [environment reference](../docs/environment.md) is generated from `REGISTRY` when the site is
built (mkdocs_hooks.py, monitor.reference.env_page), and tests/test_docs_environment.py greps the
code for every `FIRSTTOKEN_…` name it reads and fails when one is missing here, so the page cannot
fall behind the code. Pure data: no imports beyond the standard library, importable from anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

# The names, for the code that reads them (`os.environ.get(envvars.DATABASE_URL)`): one spelling.
DATABASE_URL = "FIRSTTOKEN_DATABASE_URL"
READ_DATABASE_URL = "FIRSTTOKEN_READ_DATABASE_URL"
DASHBOARD_DATABASE_URL = "FIRSTTOKEN_DASHBOARD_DATABASE_URL"
MCP_DATABASE_URL = "FIRSTTOKEN_MCP_DATABASE_URL"
CONFIG = "FIRSTTOKEN_CONFIG"
AGENT = "FIRSTTOKEN_AGENT"
MCP_TOKEN = "FIRSTTOKEN_MCP_TOKEN"
DASHBOARD_PASSWORD = "FIRSTTOKEN_DASHBOARD_PASSWORD"
LINK_SECRET = "FIRSTTOKEN_LINK_SECRET"
STATUS_SECRET = "FIRSTTOKEN_STATUS_SECRET"
STATUS_URL = "FIRSTTOKEN_STATUS_URL"
URL = "FIRSTTOKEN_URL"
PARENT_PID = "FIRSTTOKEN_PARENT_PID"


@dataclass(frozen=True, slots=True)
class EnvVar:
    name: str
    read_by: str  # which commands or processes read it
    default: str  # what happens when it is unset
    description: str
    secret: bool = False  # masked wherever firsttoken prints it; never logged or stored
    group: str = "service"  # service | development | internal


REGISTRY: tuple[EnvVar, ...] = (
    EnvVar(
        DATABASE_URL,
        "every command except `demo`; the dashboard's writes (publishing, updating, resolving incidents)",
        "the config's `database:`, else `sqlite:///firsttoken.db`",
        "The database firsttoken writes to (a SQLAlchemy URL: `sqlite:///path` or "
        "`postgresql+psycopg://user:password@host:5432/db`). Overrides the config's `database:`; "
        "`firsttoken db upgrade` reads nothing else when it is set. Its password is masked in every message.",
        secret=True,
    ),
    EnvVar(
        READ_DATABASE_URL,
        "`run` (`/routes`, `/status.json`, badges), the read-only commands, the dashboard, `mcp`",
        "reads go to the writing database",
        "A streaming replica for reads. Writes (samples, alerts, silences) always go to the primary.",
        secret=True,
    ),
    EnvVar(
        DASHBOARD_DATABASE_URL,
        "the dashboard; `mcp` when neither of its own URLs is set",
        "`FIRSTTOKEN_READ_DATABASE_URL`, else `FIRSTTOKEN_DATABASE_URL`, else the config's `database:`",
        "The dashboard's database, meant for a read-only role (docker compose creates `dashboard`). "
        "`firsttoken dashboard` sets it for the Streamlit process it starts.",
        secret=True,
    ),
    EnvVar(
        MCP_DATABASE_URL,
        "`mcp`, and `/mcp` on `run`",
        "`FIRSTTOKEN_READ_DATABASE_URL`, else `FIRSTTOKEN_DASHBOARD_DATABASE_URL`, else the service's database",
        "The MCP server's database. Its sessions are read-only whatever the role "
        "(PostgreSQL `default_transaction_read_only`, SQLite `query_only`).",
        secret=True,
    ),
    EnvVar(
        CONFIG,
        "the dashboard (Streamlit process)",
        "`./firsttoken.yaml`",
        "The config file the dashboard reads prices, targets, SLOs and links from. `firsttoken dashboard` "
        "sets it from `--config`; set it yourself when running `streamlit run dashboard/app.py`. "
        "The `firsttoken` commands take `--config` instead.",
    ),
    EnvVar(
        AGENT,
        "`run`, `probe`, `check-config` (every command that loads the config; not `demo`)",
        "the config's `agent:`, else `local`",
        "This probe agent's vantage point name, stored with every sample. One config file serves "
        "every agent; each sets its own name here.",
    ),
    EnvVar(
        MCP_TOKEN,
        "`run` (`/mcp`)",
        "`/mcp` answers only on a loopback listen address; elsewhere `403`",
        "A bearer token every `/mcp` request must carry (`Authorization: Bearer …`); a request without it is `401`.",
        secret=True,
    ),
    EnvVar(
        DASHBOARD_PASSWORD,
        "the dashboard",
        "no login (unless `[auth]` in `.streamlit/secrets.toml` configures OIDC, which wins)",
        "One shared password for the dashboard's SRE pages, compared in constant time. "
        "The Provider health page is never gated.",
        secret=True,
    ),
    EnvVar(
        LINK_SECRET,
        "`run`, `notify test`",
        "a random key made once and kept in the database (`status_secrets`)",
        "The HMAC key that signs alert links (chart PNG, one-click silence). Set the same value on "
        "every agent, or leave it unset and let them share the database's.",
        secret=True,
    ),
    EnvVar(
        STATUS_SECRET,
        "`run` (the status site's subscriptions and the mails and webhooks sent to subscribers)",
        "a random key made once and kept in the database (`status_secrets`)",
        "The HMAC key that signs the status site's subscription links (confirm, unsubscribe) and derives "
        "each webhook subscriber's signing key. Changing it invalidates every link already mailed.",
        secret=True,
    ),
    EnvVar(
        STATUS_URL,
        "`run` (subscription mails), the dashboard's Provider health page",
        "the config's `status_site.url` wins; with neither, the dashboard links to its own host on port 9464",
        "The public status site's base URL, used in links (subscription mails, the dashboard) when "
        "the config's `status_site.url` is unset.",
    ),
    EnvVar(
        URL,
        "the LiteLLM routing callback (`monitor.integrations.litellm`)",
        "required when `callback_settings.firsttoken.url` is unset",
        "Where the LiteLLM callback finds `firsttoken run` (its `--listen` address) to poll `GET /routes`.",
    ),
    EnvVar(
        PARENT_PID,
        "processes firsttoken starts (probe workers, the dashboard, the demo's second agent)",
        "unset: the process lives on its own",
        "Set by firsttoken for the children it starts, so they end with it. Not for users.",
        group="internal",
    ),
    EnvVar(
        "FIRSTTOKEN_DOCS_SCREENSHOTS",
        "`make screenshots` (tests/statussite/test_browser.py)",
        "the browser test keeps its screenshots under test-artifacts/ only",
        "Also writes the status site's screenshots into docs/screenshots/.",
        group="development",
    ),
    EnvVar(
        "FIRSTTOKEN_TEST_PGHOST",
        "the test suite (tests/pg.py)",
        "`127.0.0.1`",
        "Where the PostgreSQL tests find their server.",
        group="development",
    ),
    EnvVar(
        "FIRSTTOKEN_TEST_PGPORT",
        "the test suite",
        "`5432`",
        "The PostgreSQL tests' server port.",
        group="development",
    ),
    EnvVar(
        "FIRSTTOKEN_TEST_PGUSER",
        "the test suite",
        "`postgres`",
        "The PostgreSQL tests' user (trust authentication).",
        group="development",
    ),
    EnvVar(
        "FIRSTTOKEN_TEST_PGBIN",
        "the test suite",
        "`/usr/lib/postgresql/15/bin`",
        "Where the production tests (tests/production/) find PostgreSQL's server binaries to start their own.",
        group="development",
    ),
)

NAMES = frozenset(v.name for v in REGISTRY)

# The standard variables firsttoken honours as other tools do (not FIRSTTOKEN_*): named on the page.
STANDARD: tuple[tuple[str, str], ...] = (
    (
        "HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY",
        "Probes go through the proxy as curl would; a provider's `proxy:` overrides it.",
    ),
    (
        "OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "Turn on the OpenTelemetry metrics export (`pip install 'firsttoken[otel]'`).",
    ),
    ("OTEL_SDK_DISABLED", "`true`: no OpenTelemetry export, whatever the endpoint."),
    ("OTEL_SEMCONV_STABILITY_OPT_IN", "`gen_ai_latest_experimental`: the GenAI conventions' newer metric names."),
    (
        "OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_METRIC_EXPORT_INTERVAL",
        "Read by the OpenTelemetry SDK itself (service name default: `firsttoken`).",
    ),
)


def get(name: str) -> EnvVar:
    """The registered variable `name` (KeyError for one not registered: add it to REGISTRY)."""
    for var in REGISTRY:
        if var.name == name:
            return var
    raise KeyError(name)
