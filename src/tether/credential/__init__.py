"""Provider credentials: API keys kept as `SecretStr`, read from the environment when not given."""

from tether.credential._base import CredentialBase
from tether.credential._providers import (
    A2ACredential,
    AnthropicCredential,
    DashScopeCredential,
    GeminiCredential,
    OllamaCredential,
    OpenAICredential,
)

__all__ = [
    "A2ACredential",
    "AnthropicCredential",
    "CredentialBase",
    "DashScopeCredential",
    "GeminiCredential",
    "OllamaCredential",
    "OpenAICredential",
]

for _name in __all__:
    globals()[_name].__module__ = "tether.credential"
del _name
