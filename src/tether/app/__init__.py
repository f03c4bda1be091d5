"""Applications built on the agent: session storage (`tether.app.storage`) and services."""

__all__: list[str] = []
