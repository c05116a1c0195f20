"""firsttoken's Streamlit dashboard: `app.py` (navigation), `pages/` (UI only),
`data.py` (cached queries), `charts.py` (pure Plotly builders)."""
