"""A probe agent: service, scheduler, leader, reachability, /metrics and /healthz."""
