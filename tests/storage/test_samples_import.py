"""`firsttoken samples import FILE` (DESIGN §17): what `samples --csv` wrote loads back, whole or not at all."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest

from monitor.sample import write_csv
from tests.alerts.helpers import sample
from tests.commandline import firsttoken_cli

T0 = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)


cli = firsttoken_cli


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_import_loads_what_samples_csv_wrote_and_refuses_a_bad_file_whole(tmp_path, backend, request):
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'to.db'}"
    else:
        from tests.pg import pg_url

        url = pg_url(request.getfixturevalue("pg_server").create_database())
    assert cli(tmp_path, url, "db", "upgrade").returncode == 0
    written = [
        sample("p/m@r:q", T0 + timedelta(days=d, minutes=i), 300.0 + i, ok=i % 7 != 0, agent=f"a{i % 2}")
        for d in range(3)
        for i in range(20)
    ]
    out = io.StringIO()
    write_csv(written, out)
    good = tmp_path / "good.csv"
    good.write_text(out.getvalue())
    lines = out.getvalue().splitlines()
    header = lines[0].split(",")
    broken = lines[5].split(",")
    broken[header.index("started_at")] = "yesterday"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([*lines[:5], ",".join(broken), *lines[6:]]) + "\n")

    refused = cli(tmp_path, url, "samples", "import", str(bad))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "bad.csv:6: bad started_at 'yesterday'" in refused.stderr
    first = cli(tmp_path, url, "samples", "import", str(good))
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"imported 60 samples from {good} (0 already stored)"
    again = cli(tmp_path, url, "samples", "import", str(good))
    assert again.stdout.strip() == f"imported 0 samples from {good} (60 already stored)"

    exported = cli(tmp_path, url, "samples", "--since", "3650d", "--csv")
    assert exported.returncode == 0
    import csv

    from monitor.storage.samples_csv import read_samples

    back = read_samples(list(csv.reader(io.StringIO(exported.stdout))))
    assert sorted(back, key=lambda s: s.id) == sorted(written, key=lambda s: s.id)  # every field, both ways
