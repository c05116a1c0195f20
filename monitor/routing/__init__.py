"""Routing: turn measured routes into a ranking and a gateway's routing config. Pure."""
