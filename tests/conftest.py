"""Shared fixtures: the whole suite runs offline against local servers only."""

from __future__ import annotations
