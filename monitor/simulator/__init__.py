"""Simulated LLM providers over real HTTP: the ground truth for tests and benchmarks.

Every protocol of DESIGN §2 on one loopback port, with exact, configurable
timing (TTFT, inter-token latency, prefill, jitter, spikes), every fault a
probe must classify, and a truth record per request stamped with
`perf_counter_ns()` at the moment each token was written.
"""

from monitor.simulator.behaviour import FAULTS, BehaviourError, ModelBehaviour, parse_sim_name
from monitor.simulator.catalogue import BehaviourSource, Catalogue, load_scenario
from monitor.simulator.run import add_arguments, run_simulator, serve
from monitor.simulator.server import Simulator
from monitor.simulator.truth import TruthRecord, TruthStore

__all__ = [
    "FAULTS",
    "BehaviourError",
    "BehaviourSource",
    "Catalogue",
    "ModelBehaviour",
    "Simulator",
    "TruthRecord",
    "TruthStore",
    "add_arguments",
    "load_scenario",
    "parse_sim_name",
    "run_simulator",
    "serve",
]
