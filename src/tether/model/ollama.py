"""`OllamaChatModel`: models served by Ollama."""

from tether.model.providers._ollama import OllamaChatModel

__all__ = ["OllamaChatModel"]
