"""Children started with monitor.childproc end when their parent is SIGKILLed (Linux)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

# A parent that starts one child and prints its pid, then sleeps until killed.
PARENT = textwrap.dedent(
    """
    import subprocess, sys, time
    from monitor.childproc import child_env
    child = subprocess.Popen([sys.executable, *sys.argv[1:]], env=child_env())
    print(child.pid, flush=True)
    time.sleep(60)
    """
)


def _child_of_killed_parent(child_args: list[str]) -> psutil.Process:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, *child_args], stdout=subprocess.PIPE, text=True)
    child = psutil.Process(int(parent.stdout.readline()))
    time.sleep(1.0)  # the child is up and has asked the kernel
    assert child.is_running()
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(5)
    return child


def _gone_within(child: psutil.Process, timeout_s: float) -> bool:
    try:
        child.wait(timeout_s)
    except psutil.TimeoutExpired:
        child.kill()
        return False
    return True


def test_a_module_run_through_childproc_dies_with_its_parent():
    child = _child_of_killed_parent(["-m", "monitor.childproc", "http.server", "0", "--bind", "127.0.0.1"])
    assert _gone_within(child, 5)


def test_the_simulator_dies_with_its_parent():
    child = _child_of_killed_parent(["-m", "monitor.simulator", "--host", "127.0.0.1", "--port", "0"])
    assert _gone_within(child, 5)


def test_without_the_variable_a_child_outlives_its_parent():
    """The control: the same child not started through child_env is not ended by the kernel."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT.replace("env=child_env()", "env=None"), "-m", "http.server", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    child = psutil.Process(int(parent.stdout.readline()))
    time.sleep(1.0)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(5)
    try:
        assert not _gone_within(child, 1.5)
    finally:
        if child.is_running():
            child.kill()


def test_a_child_whose_parent_is_already_gone_exits_at_once():
    from monitor.childproc import PARENT_ENV

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "monitor.childproc", "http.server", "0"],
        env={**os.environ, PARENT_ENV: str(gone.pid)},
        timeout=10,
    )
    assert result.returncode == 1
    assert time.monotonic() - started < 5
