"""A configured target that has never been probed: every page that can pick it says so in words."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.queries.agents import sync_targets
from tests.dashboard.conftest import BACKENDS
from tests.dashboard.figures import problems
from tests.dashboard.seed import seed
from tests.pg import pg_url


@dataclass(frozen=True)
class NewTarget:
    id: str = "zz-new/model-x@us-east-1:short"
    provider: str = "zz-new"
    model: str = "model-x"
    region: str = "us-east-1"
    prompt: str = "short"
    protocol: str = "openai-chat"
    canonical_model: str = "model-x"


NEW = NewTarget()


@pytest.fixture(scope="module", params=BACKENDS)
def with_unprobed_target(request, tmp_path_factory) -> Iterator[str]:
    """The seeded database plus one configured target without a single sample."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('dash-empty') / 'seeded.db'}"
    else:
        url = pg_url(request.getfixturevalue("pg_server").create_database())
    engine = make_engine(url)
    migrate.upgrade(engine)
    seed(engine)
    sync_targets(engine, [NEW])
    engine.dispose()
    yield url


def infos(at) -> list[str]:
    return [str(i.value) for i in at.info]


def test_trends_of_an_unprobed_target_say_there_are_no_samples(app, with_unprobed_target):
    at = app(with_unprobed_target).run()
    at.switch_page("pages/trends.py").run()
    at.multiselect(key="trends-p").set_value([NEW.provider])
    at.multiselect(key="trends-q").set_value([NEW.prompt]).run()
    assert not problems(at), problems(at)
    assert any("No samples for these 1 targets" in i for i in infos(at)), infos(at)


@pytest.mark.parametrize(
    ("page", "picker", "choice", "message"),
    [
        ("samples", "samples-target", NEW.id, f"No samples of `{NEW.id}`"),
        ("health", "health-provider", NEW.provider, f"No samples from {NEW.provider}"),
    ],
)
def test_picking_the_unprobed_target_says_there_are_no_samples(
    app, with_unprobed_target, page, picker, choice, message
):
    at = app(with_unprobed_target).run()
    at.switch_page(f"pages/{page}.py").run()
    at.selectbox(key=picker).set_value(choice).run()
    assert not problems(at), problems(at)
    assert any(message in i for i in infos(at)), infos(at)


def test_overview_counts_the_unprobed_target_as_no_data(app, with_unprobed_target):
    at = app(with_unprobed_target).run()
    assert not problems(at), problems(at)
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["No data (1 h)"]) >= 1, metrics
