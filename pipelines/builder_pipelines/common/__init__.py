"""Pieces every pipeline shares: the contract (spec, events, manifest), data loading, metrics, thresholds."""
