"""`DashScopeChatModel`: Alibaba Cloud DashScope (Qwen) models."""

from tether.model.providers._dashscope import DashScopeChatModel

__all__ = ["DashScopeChatModel"]
