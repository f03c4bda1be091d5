"""Applications built on the agent: session storage (`tether.app.storage`) and services."""
