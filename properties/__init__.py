"""Hypothesis strategies, the generic properties and the audit engine."""
