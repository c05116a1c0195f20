# One image for every role: probe agent (`firsttoken run`), one-shot migration
# (`firsttoken db upgrade`) and dashboard (`firsttoken dashboard`).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY monitor ./monitor
COPY dashboard ./dashboard
COPY migrations ./migrations
# Pango and HarfBuzz: WeasyPrint lays out the SLA and weekly reports' PDFs with them (DESIGN §17).
RUN apt-get update && apt-get install -y --no-install-recommends libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 \
    && rm -rf /var/lib/apt/lists/*
RUN pip install '.[bedrock,mcp]' && useradd --system --home /var/lib/firsttoken firsttoken \
    && mkdir -p /var/lib/firsttoken && chown firsttoken /var/lib/firsttoken
USER firsttoken
WORKDIR /var/lib/firsttoken
# /metrics and /healthz (run), the dashboard
EXPOSE 9464 8501
ENTRYPOINT ["firsttoken"]
CMD ["run", "--listen", "0.0.0.0:9464", "--config", "/etc/firsttoken/firsttoken.yaml"]
