"""A real LiteLLM proxy (PyPI `litellm[proxy]`, in .venv-litellm: `make litellm-deps`) for the routing
callback's integration test: started once, on loopback, with firsttoken's callback in its own config."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from pathlib import Path

import httpx
import yaml

from tests.net import free_port
from tests.routing.live_rig import wait_until

ROOT = Path(__file__).resolve().parents[2]
LITELLM = ROOT / ".venv-litellm" / "bin" / "litellm"


class LiteLLMProxy:
    def __init__(self, workdir: Path, model_list: list[dict], firsttoken: dict) -> None:
        # `make test` builds it (litellm-deps); a missing proxy is a failure, never a skip.
        assert LITELLM.exists(), f"{LITELLM} is missing: run `make litellm-deps`"
        self.master_key = "sk-" + secrets.token_hex(16)
        self.port = free_port()
        self.config = workdir / "litellm.yaml"
        self.config.write_text(
            yaml.safe_dump(
                {
                    "model_list": model_list,
                    "litellm_settings": {"callbacks": ["monitor.integrations.litellm.handler"]},
                    "callback_settings": {"firsttoken": firsttoken},
                    # LiteLLM's own failure handling off: what moves traffic here is firsttoken alone.
                    "router_settings": {"routing_strategy": "simple-shuffle", "disable_cooldowns": True,
                                        "num_retries": 0},
                    "general_settings": {"master_key": self.master_key},
                }
            )
        )  # fmt: skip
        self.log_path = workdir / "litellm.log"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiteLLMProxy:
        env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT))
        env.pop("LITELLM_MASTER_KEY", None)
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [str(LITELLM), "--config", str(self.config), "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

        def up() -> bool:
            assert self.process.poll() is None, self.log()
            try:
                return httpx.get(self.url + "/health/liveliness", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        assert wait_until(up, 120, 0.5), self.log()
        return self

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def chat(self, client: httpx.Client, model: str) -> str | None:
        """One real request through the proxy: the api_base of the deployment it went to (a failed one's too,
        where LiteLLM names it), else the status code."""
        with client.stream(
            "POST",
            self.url + "/v1/chat/completions",
            headers={"Authorization": f"Bearer {self.master_key}"},
            json={"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "stream": True},
        ) as response:
            response.read()  # the whole stream: a request that fails mid-way counts against its upstream
        return response.headers.get("x-litellm-model-api-base") or f"HTTP {response.status_code}"
