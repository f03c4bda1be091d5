"""`GeminiChatModel`: Google Gemini through `google-genai`."""

from tether.model.providers._gemini import GeminiChatModel

__all__ = ["GeminiChatModel"]
