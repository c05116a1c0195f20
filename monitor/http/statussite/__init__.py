"""The status site (DESIGN §16): server-rendered HTML that works without JavaScript.

source.py     what the site shows, read once per render: the public snapshot (monitor.http.public)
              and the daily history by the quorum (monitor.storage.queries.statushistory)
view.py       the components, bars, uptime and trends, from values (pure)
render.py     the pages as bytes (Jinja2, autoescaped; templates/): one code path for both
              `run --listen` (/status, /status/<provider>) and `firsttoken status export DIR`
serve.py      the listen address's side: renders shared for RENDER_TTL_S, gzip, ETag, Cache-Control
"""
