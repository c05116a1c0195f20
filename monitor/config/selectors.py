"""`match:` selectors, shared by alert rules, silences and SLOs: globs per scope label."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Annotated

from pydantic import AfterValidator

from monitor.config.fields import Text, read_only, spec

SCOPE_LABELS = ("provider", "model", "region", "prompt")


def scope_matches(match: Mapping[str, str], **labels: str | None) -> bool:
    """Does a scope (provider/model/region/prompt; None = wider) fit `match` globs?

    A label the scope does not have (a provider-wide alert has no model) only
    fits `*`: silencing one model must not mute the whole provider.
    """
    for label, pattern in match.items():
        value = labels.get(label)
        if value is None:
            if pattern != "*":
                return False
        elif not fnmatch.fnmatchcase(value, pattern):
            return False
    return True


@spec
class Match:
    provider: Text | None = None
    model: Text | None = None
    region: Text | None = None
    prompt: Text | None = None


# `match:` globs per label, kept as a read-only mapping of the labels given.
Scope = Annotated[Match, AfterValidator(lambda m: read_only({k: getattr(m, k) for k in SCOPE_LABELS if getattr(m, k)}))]
