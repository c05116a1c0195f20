"""Reading Plotly figures back out of an AppTest run."""

from __future__ import annotations

import json
from typing import Any

from streamlit.testing.v1 import AppTest


def figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def problems(at: AppTest) -> list[str]:
    """Exceptions and error boxes: a page under test must show neither."""
    return [str(e.value) for e in at.exception] + [str(e.value) for e in at.error]


def values(field: Any) -> list:
    """A trace array as a list: Plotly 6+ ships numpy arrays as {"dtype", "bdata", "shape"}."""
    if isinstance(field, dict) and "bdata" in field:
        import base64

        import numpy as np

        array = np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
        if "shape" in field:
            array = array.reshape([int(n) for n in str(field["shape"]).split(",")])
        return array.tolist()
    return list(field)
